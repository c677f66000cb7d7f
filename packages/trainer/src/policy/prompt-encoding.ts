/**
 * How a language-model policy turns text into token ids: an observation into the prompt it
 * scores and samples from, a candidate label into the ids that continue that prompt, both as the
 * {@link PromptFormat} says and cached per string.
 */
import type { ChatTemplate, TextTokenizer } from '@poad/hf-files';

/**
 * How an observation becomes the prompt the policy scores and samples from (`--prompt-format`).
 *
 * - `plain`: `<s>` (the tokenizer's BOS, when it has one) + the observation's ids; a candidate
 *   label's ids are those of `' ' + label`, since labels continue the observation's last sentence
 *   (`… You decide to` + ` open the door`). What the embedded models were trained on.
 * - `chat`: the observation is the user message of the model's chat template, rendered with the
 *   generation prompt (`add_generation_prompt`), so that the prompt ends where the assistant's
 *   reply begins; the text is tokenized without adding special tokens (the template writes its
 *   own BOS and turn markers, which tokenize to their special ids). A candidate label is the whole
 *   assistant reply: its ids are those of the label alone, without the leading space of `plain`.
 *   The prompt's ids stay the same for every label (one KV cache per prompt), and for ChatML
 *   (Qwen) and Llama 3.x, whose generation prompts end in a newline that their pre-tokenizers
 *   never join to a following word, they are also how the tokenizer splits `rendered + label`.
 *   No end-of-turn token is appended, so a label is scored on its own tokens only, as in `plain`
 *   (TWOSOME's normalisation included).
 *   Generated text (open action spaces) continues in the assistant turn up to a stop token.
 *   `now` is the clock of the template's `strftime_now` (Llama 3.x writes today's date into its
 *   system turn): a run fixes it to the date recorded in its config.json, so that every prompt,
 *   also after `--resume` on another day, renders the same.
 */
export type PromptFormat =
  | { readonly kind: 'plain' }
  | { readonly kind: 'chat'; readonly template: ChatTemplate; readonly now: Date };

/** Most prompts kept in the cache; past it the cache starts again empty. */
const PROMPT_CACHE_SIZE = 50_000;

/** Encodes observations and labels with one tokenizer in one {@link PromptFormat}, with caches. */
export class PromptEncoder {
  private readonly prompts = new Map<string, Int32Array>();
  private readonly labels = new Map<string, Int32Array>();
  private current: PromptFormat = { kind: 'plain' };

  constructor(private readonly tokenizer: TextTokenizer) {}

  /** The format in use (default `plain`). */
  get format(): PromptFormat {
    return this.current;
  }

  /** Switches the format and forgets every id encoded in the previous one. */
  setFormat(format: PromptFormat): void {
    this.current = format;
    this.prompts.clear();
    this.labels.clear();
  }

  /** The prompt ids of an observation. */
  async prompt(observation: string): Promise<Int32Array> {
    let ids = this.prompts.get(observation);
    if (!ids) {
      const f = this.current;
      if (f.kind === 'chat') {
        const text = f.template.render([{ role: 'user', content: observation }], {
          addGenerationPrompt: true,
          now: f.now,
        });
        ids = Int32Array.from(await this.tokenizer.encode(text, { addSpecialTokens: false }));
      } else {
        const body = await this.tokenizer.encode(observation, { addSpecialTokens: false });
        const bos = this.tokenizer.bosId;
        ids = Int32Array.from(bos === undefined ? body : [bos, ...body]);
      }
      if (this.prompts.size > PROMPT_CACHE_SIZE) this.prompts.clear();
      this.prompts.set(observation, ids);
    }
    return ids;
  }

  /** The ids of each label as a continuation of any prompt (they do not depend on the prompt). */
  async labelIds(labels: readonly string[]): Promise<Int32Array[]> {
    return Promise.all(
      labels.map(async (label) => {
        let ids = this.labels.get(label);
        if (!ids) {
          // In the chat format the label starts the assistant's turn: no leading space.
          const text = this.current.kind === 'chat' ? label : ` ${label}`;
          ids = Int32Array.from(await this.tokenizer.encode(text, { addSpecialTokens: false }));
          this.labels.set(label, ids);
        }
        return ids;
      }),
    );
  }
}
