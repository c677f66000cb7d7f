import { join } from 'node:path';
import {
  ChatTemplate,
  type ChatTemplateChoice,
  chatTemplateOf,
  templateSpecialTokens,
} from './chat-template.js';
import { CheckpointError } from './errors.js';
import { isFile, readTextFile } from './json-file.js';

/**
 * The chat template of a model folder (a checkpoint folder or a Hub snapshot): `chat_template.jinja`
 * when present, else `chat_template` in `tokenizer_config.json`, with the special tokens of
 * `tokenizer_config.json`. Undefined when the model has no chat template.
 */
export async function readChatTemplate(
  dir: string,
  choice: Omit<ChatTemplateChoice, 'jinja'> = {},
): Promise<ChatTemplate | undefined> {
  const configPath = join(dir, 'tokenizer_config.json');
  const jinjaPath = join(dir, 'chat_template.jinja');
  let config: unknown = {};
  if (await isFile(configPath)) {
    try {
      config = JSON.parse(await readTextFile(configPath, 'tokenizer config'));
    } catch (cause) {
      if (cause instanceof CheckpointError) throw cause;
      throw new CheckpointError('tokenizer', configPath, 'is not valid JSON', undefined, { cause });
    }
  }
  const jinja = (await isFile(jinjaPath))
    ? await readTextFile(jinjaPath, 'chat template')
    : undefined;
  const source = chatTemplateOf(config, { ...choice, jinja });
  return source === undefined ? undefined : new ChatTemplate(source, templateSpecialTokens(config));
}
