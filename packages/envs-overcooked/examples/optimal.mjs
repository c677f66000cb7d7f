// Plays the shortest tomato-salad episode and prints each step.
// Run after building: npx tsup && node examples/optimal.mjs
import { createOvercookedEnv } from '@poad/envs-overcooked';

const env = createOvercookedEnv('tomato-salad');
let step = await env.reset({ seed: 0 });
console.log(step.observation);
console.log('labels:', step.actions.join(' | '));
for (const label of [
  'pick up the tomato',
  'put the tomato on the cutting board',
  'chop the tomato',
  'pick up the tomato',
  'take the bowl',
  'serve the dish',
]) {
  step = await env.step(label);
  console.log(
    `${label.padEnd(36)} reward ${step.reward.toFixed(6).padStart(9)}  primitive steps ${step.info.primitiveSteps}`,
  );
}
console.log(env.render());
console.log('episode:', {
  success: step.info.success,
  discountedReturn: Number(step.info.discountedReturn.toFixed(5)),
  length: step.info.length,
  macroSteps: step.info.macroSteps,
});
await env.close();
