#!/usr/bin/env node
// Creates packages/<name> from templates/package: `npm run new-package -- <name> "<description>"`.
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [name, description = 'A POAD-TS package.'] = process.argv.slice(2);
if (!name || !/^[a-z][a-z0-9-]*$/.test(name)) {
  console.error(
    'usage: npm run new-package -- <name> "<description>"  (name: lowercase letters, digits, dashes)',
  );
  process.exit(2);
}
const root = new URL('..', import.meta.url).pathname;
const dest = join(root, 'packages', name);
if (existsSync(dest)) {
  console.error(`packages/${name} already exists; pick another name or edit it directly.`);
  process.exit(1);
}
cpSync(join(root, 'templates', 'package'), dest, { recursive: true });
const fill = (dir) => {
  for (const entry of readdirSync(dir)) {
    const p = join(dir, entry);
    if (statSync(p).isDirectory()) fill(p);
    else
      writeFileSync(
        p,
        readFileSync(p, 'utf8')
          .replaceAll('__NAME__', name)
          .replaceAll('__DESCRIPTION__', description),
      );
  }
};
fill(dest);
console.log(
  `created packages/${name} (@poad/${name}); run \`npm install\` to link it into the workspace.`,
);
