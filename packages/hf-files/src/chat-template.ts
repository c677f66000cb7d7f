import { Environment, Interpreter, Template } from '@huggingface/jinja';
import { CheckpointError, checkpointErrorFrom } from './errors.js';

/** One message of a conversation. Templates read `role` and `content`; other fields pass through. */
export interface ChatMessage {
  role: string;
  content: string;
  [field: string]: unknown;
}

/** Options for {@link applyChatTemplate} and {@link ChatTemplate.render}. */
export interface ApplyChatTemplateOptions {
  /** End with the opening of an assistant turn, for the model to continue (default false, as in transformers). */
  addGenerationPrompt?: boolean;
  /** Tool schemas, passed to the template as `tools` (default null). */
  tools?: readonly unknown[] | null;
  /** Documents for retrieval templates, passed as `documents` (default null). */
  documents?: readonly unknown[] | null;
  /** The clock of `strftime_now` (default now), so that dated templates render reproducibly. */
  now?: Date;
  /** More template variables (e.g. `date_string`, `enable_thinking`); they override the others. */
  variables?: Record<string, unknown>;
}

/** Options for {@link chatTemplateOf}. */
export interface ChatTemplateChoice {
  /** A named template of a model that has several (e.g. `tool_use`); default `default`. */
  name?: string;
  /** The text of `chat_template.jinja`, which transformers prefers over `tokenizer_config.json`. */
  jinja?: string;
  /** Whether tools will be passed: picks the `tool_use` template when the model has one. */
  withTools?: boolean;
}

/** Special-token fields of `tokenizer_config.json` that transformers passes to templates. */
export const TEMPLATE_SPECIAL_TOKENS: readonly string[] = Object.freeze([
  'bos_token',
  'eos_token',
  'unk_token',
  'sep_token',
  'pad_token',
  'cls_token',
  'mask_token',
]);

const FILE = 'tokenizer_config.json';

function tokenText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  const c = (v as { content?: unknown } | null)?.content;
  return typeof c === 'string' ? c : undefined;
}

/**
 * The special tokens of a `tokenizer_config.json` as template variables (`bos_token`, `eos_token`,
 * …), each as its text; tokens that are null or absent are left out (undefined in the template).
 */
export function templateSpecialTokens(tokenizerConfig: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  const cfg = (tokenizerConfig ?? {}) as Record<string, unknown>;
  for (const key of TEMPLATE_SPECIAL_TOKENS) {
    const t = tokenText(cfg[key]);
    if (t !== undefined && t !== '') out[key] = t;
  }
  return out;
}

/**
 * The chat template of a model, as transformers chooses it: `chat_template.jinja` when given, else
 * `chat_template` of `tokenizer_config.json`, which is a string or a list of `{ name, template }`
 * (then `name`, else `tool_use` when tools are passed and it exists, else `default`). Undefined
 * when the model has none; a list without the asked-for name is a `CheckpointError`.
 */
export function chatTemplateOf(
  tokenizerConfig: unknown,
  choice: ChatTemplateChoice = {},
): string | undefined {
  if (choice.jinja !== undefined && choice.name === undefined) return choice.jinja;
  const value = (tokenizerConfig as { chat_template?: unknown } | null)?.chat_template;
  if (value == null) return choice.name === undefined ? undefined : missingName(choice.name, []);
  if (typeof value === 'string') {
    return choice.name === undefined || choice.name === 'default'
      ? value
      : missingName(choice.name, ['default']);
  }
  if (!Array.isArray(value)) {
    throw new CheckpointError(
      'tokenizer',
      FILE,
      `"chat_template" must be a string or a list of {"name", "template"}, got ${typeof value}`,
    );
  }
  const named = new Map<string, string>();
  for (const t of value) {
    const { name, template } = (t ?? {}) as { name?: unknown; template?: unknown };
    if (typeof name !== 'string' || typeof template !== 'string') {
      throw new CheckpointError(
        'tokenizer',
        FILE,
        `"chat_template" list entries must be {"name": string, "template": string}, got ${JSON.stringify(t)}`,
      );
    }
    named.set(name, template);
  }
  const want = choice.name ?? (choice.withTools && named.has('tool_use') ? 'tool_use' : 'default');
  return named.get(want) ?? missingName(want, [...named.keys()]);
}

function missingName(name: string, names: string[]): never {
  throw new CheckpointError(
    'tokenizer',
    FILE,
    `has no chat template named "${name}"; it has ${names.length === 0 ? 'none' : names.map((n) => `"${n}"`).join(', ')}`,
  );
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Python's `datetime.strftime` in the C locale for the common directives, on local time. */
export function strftime(date: Date, format: string): string {
  const p2 = (n: number) => String(n).padStart(2, '0');
  return format.replace(/%([a-zA-Z%])/g, (m, c: string) => {
    switch (c) {
      case 'Y':
        return String(date.getFullYear());
      case 'y':
        return p2(date.getFullYear() % 100);
      case 'm':
        return p2(date.getMonth() + 1);
      case 'd':
        return p2(date.getDate());
      case 'e':
        return String(date.getDate()).padStart(2, ' ');
      case 'b':
        return MONTHS[date.getMonth()]!.slice(0, 3);
      case 'B':
        return MONTHS[date.getMonth()]!;
      case 'a':
        return DAYS[date.getDay()]!.slice(0, 3);
      case 'A':
        return DAYS[date.getDay()]!;
      case 'H':
        return p2(date.getHours());
      case 'I':
        return p2(((date.getHours() + 11) % 12) + 1);
      case 'p':
        return date.getHours() < 12 ? 'AM' : 'PM';
      case 'M':
        return p2(date.getMinutes());
      case 'S':
        return p2(date.getSeconds());
      case '%':
        return '%';
      default:
        return m;
    }
  });
}

/**
 * A compiled chat template with the special tokens of its tokenizer. Rendering follows
 * transformers' `apply_chat_template(..., tokenize=False)`: the Jinja engine is
 * `@huggingface/jinja` (the one transformers.js uses; it applies `trim_blocks` and
 * `lstrip_blocks` as transformers does, and provides `raise_exception` and `strftime_now`), the
 * variables are `messages`, `add_generation_prompt`, `tools`, `documents`, the special tokens and
 * `variables`. The result already holds the template's BOS (when it writes one): tokenize it
 * without adding special tokens.
 */
export class ChatTemplate {
  private readonly compiled: Template;

  constructor(
    readonly source: string,
    readonly specialTokens: Record<string, string> = {},
  ) {
    try {
      this.compiled = new Template(source);
    } catch (e) {
      throw checkpointErrorFrom('tokenizer', FILE, 'the chat template does not parse', e);
    }
  }

  /** The prompt text of `messages`. A template's `raise_exception` becomes a `CheckpointError`. */
  render(messages: readonly ChatMessage[], options: ApplyChatTemplateOptions = {}): string {
    const now = options.now ?? new Date();
    // The globals of @huggingface/jinja's Template.render, with strftime_now on the given clock
    // (Template.render would refuse a second strftime_now), then the template variables.
    const variables: Record<string, unknown> = {
      false: false,
      true: true,
      none: null,
      False: false,
      True: true,
      None: null,
      raise_exception: (message: unknown) => {
        throw new Error(String(message));
      },
      range: pythonRange,
      strftime_now: (format: string) => strftime(now, String(format)),
      messages: messages.map((m) => ({ ...m })),
      add_generation_prompt: options.addGenerationPrompt ?? false,
      tools: options.tools ?? null,
      documents: options.documents ?? null,
      ...this.specialTokens,
      ...options.variables,
    };
    try {
      const env = new Environment();
      for (const [name, value] of Object.entries(variables)) env.set(name, value);
      return String(new Interpreter(env).run(this.compiled.parsed).value);
    } catch (e) {
      throw checkpointErrorFrom('tokenizer', FILE, 'the chat template refused the conversation', e);
    }
  }
}

/** Python's `range(stop)` / `range(start, stop[, step])`. */
function pythonRange(start: number, stop?: number, step = 1): number[] {
  const [a, b] = stop === undefined ? [0, start] : [start, stop];
  if (step === 0) throw new Error('range() arg 3 must not be zero');
  const out: number[] = [];
  for (let i = a; step > 0 ? i < b : i > b; i += step) out.push(i);
  return out;
}

/**
 * Render `messages` with the chat template of a `tokenizer_config.json` (parsed), as
 * transformers' `apply_chat_template(messages, tokenize=False, add_generation_prompt=…)` does.
 * A model without a chat template is a `CheckpointError` (use a plain prompt for it).
 */
export function applyChatTemplate(
  tokenizerConfig: unknown,
  messages: readonly ChatMessage[],
  options: ApplyChatTemplateOptions & ChatTemplateChoice = {},
): string {
  const source = chatTemplateOf(tokenizerConfig, {
    ...options,
    withTools: options.withTools ?? (options.tools != null && options.tools.length > 0),
  });
  if (source === undefined) {
    throw new CheckpointError(
      'tokenizer',
      FILE,
      'has no "chat_template" (and no chat_template.jinja was given); this model has no chat format, so use a plain prompt',
    );
  }
  return new ChatTemplate(source, templateSpecialTokens(tokenizerConfig)).render(messages, options);
}
