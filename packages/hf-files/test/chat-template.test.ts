import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Template } from '@huggingface/jinja';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  applyChatTemplate,
  type ChatMessage,
  chatTemplateOf,
  strftime,
  templateSpecialTokens,
} from '../src/chat-template.js';
import { readChatTemplate } from '../src/chat-template-file.js';
import { CheckpointError } from '../src/errors.js';
import { withTempDir } from './test-helpers.js';

const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`./fixtures/chat-templates/${name}`, import.meta.url), 'utf8'));
const qwen = fixture('qwen2.5-instruct.json');
const llama = fixture('llama-3.2-instruct.json');
const named = fixture('named-templates.json');

const CHAT: ChatMessage[] = [
  { role: 'user', content: 'Hello, how are you?' },
  { role: 'assistant', content: "I'm doing great. How can I help you today?" },
  { role: 'user', content: "I'd like to show off how chat templating works!" },
];
const WITH_SYSTEM: ChatMessage[] = [
  { role: 'system', content: '  You are a terse assistant in a text game.  ' },
  {
    role: 'user',
    content: 'You are in the kitchen. Valid actions: "walk to fridge", "open fridge".',
  },
];
const AWKWARD: ChatMessage[] = [
  {
    role: 'user',
    content: 'Unicode: café ☕ 日本語, quotes "x" \'y\', braces {{ not_a_var }} {% raw %}',
  },
  { role: 'assistant', content: '  spaced  \n\n' },
  { role: 'user', content: 'a\\nb\tc' },
];
const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather of a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string', description: 'Name, e.g. Zürich' } },
        required: ['city'],
      },
    },
  },
];
const TOOL_CALL: ChatMessage[] = [
  { role: 'user', content: 'Weather in Oslo?' },
  {
    role: 'assistant',
    content: '',
    tool_calls: [
      { type: 'function', function: { name: 'get_weather', arguments: { city: 'Oslo' } } },
    ],
  },
  { role: 'tool', content: '{"temp": -3}' },
];
// A fixed local clock, so that strftime_now renders the same date in both languages.
const NOW = new Date(2024, 8, 5, 10, 30, 0);
const NOW_ISO = '2024-09-05T10:30:00';

describe('chat templates', () => {
  it('renders Qwen2.5-Instruct as documented (default system prompt, generation prompt)', () => {
    expect(applyChatTemplate(qwen, CHAT)).toBe(
      "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello, how are you?<|im_end|>\n<|im_start|>assistant\nI'm doing great. How can I help you today?<|im_end|>\n<|im_start|>user\nI'd like to show off how chat templating works!<|im_end|>\n",
    );
    expect(
      applyChatTemplate(qwen, [{ role: 'user', content: 'hi' }], { addGenerationPrompt: true }),
    ).toBe(
      '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it("renders Llama-3.2-Instruct with its BOS, today's date and a trimmed system message", () => {
    expect(applyChatTemplate(llama, WITH_SYSTEM, { addGenerationPrompt: true, now: NOW })).toBe(
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\nToday Date: 05 Sep 2024\n\nYou are a terse assistant in a text game.<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nYou are in the kitchen. Valid actions: "walk to fridge", "open fridge".<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
    );
  });

  it('equals a plain @huggingface/jinja rendering of the same template and variables', () => {
    const direct = new Template(qwen.chat_template as string).render({
      messages: WITH_SYSTEM,
      add_generation_prompt: true,
      tools: null,
      documents: null,
      eos_token: '<|im_end|>',
      pad_token: '<|endoftext|>',
    });
    expect(applyChatTemplate(qwen, WITH_SYSTEM, { addGenerationPrompt: true })).toBe(direct);
  });

  it('picks named templates as transformers does, and reads AddedToken special tokens', () => {
    expect(templateSpecialTokens(named)).toEqual({ bos_token: '<s>', eos_token: '</s>' });
    expect(templateSpecialTokens(qwen)).toEqual({
      eos_token: '<|im_end|>',
      pad_token: '<|endoftext|>',
    });
    expect(chatTemplateOf(named)).toContain('<|user|>');
    expect(chatTemplateOf(named, { withTools: true })).toContain('[TOOLS]');
    expect(chatTemplateOf(named, { name: 'tool_use' })).toContain('[TOOLS]');
    expect(() => chatTemplateOf(named, { name: 'rag' })).toThrow(
      /no chat template named "rag"; it has "default", "tool_use"/,
    );
    expect(chatTemplateOf({})).toBeUndefined();
    expect(chatTemplateOf(qwen, { jinja: 'from the .jinja file' })).toBe('from the .jinja file');
    expect(() => applyChatTemplate({ eos_token: '</s>' }, CHAT)).toThrow(/has no "chat_template"/);
  });

  it("turns a template's raise_exception into a CheckpointError", () => {
    const e = (() => {
      try {
        applyChatTemplate(named, [{ role: 'assistant', content: 'first' }], { tools: TOOLS });
      } catch (err) {
        return err;
      }
    })();
    expect(e).toBeInstanceOf(CheckpointError);
    expect((e as Error).message).toMatch(
      /refused the conversation: Conversation roles must alternate/,
    );
  });

  it('reads chat_template.jinja before tokenizer_config.json from a model folder', async () => {
    await withTempDir(async (dir) => {
      expect(await readChatTemplate(dir)).toBeUndefined();
      await writeFile(join(dir, 'tokenizer_config.json'), JSON.stringify(qwen));
      expect((await readChatTemplate(dir))!.render(CHAT)).toBe(applyChatTemplate(qwen, CHAT));
      await writeFile(
        join(dir, 'chat_template.jinja'),
        '{{ bos_token }}{{ messages[0].content }}{{ eos_token }}',
      );
      expect((await readChatTemplate(dir))!.render(CHAT)).toBe('Hello, how are you?<|im_end|>');
    });
  });

  it('formats strftime_now as Python does in the C locale', () => {
    expect(strftime(NOW, '%d %b %Y')).toBe('05 Sep 2024');
    expect(strftime(NOW, '%A %B %e %H:%M:%S %y %%')).toBe('Thursday September  5 10:30:00 24 %');
  });
});

// Debian's interpreter, where apt installs python3-jinja2.
const PYTHON = '/usr/bin/python3';
const SCRIPT = fileURLToPath(new URL('./chat_template_reference.py', import.meta.url));
const probe = spawnSync(PYTHON, ['-c', 'import jinja2'], { encoding: 'utf8' });
const hasJinja2 = probe.status === 0;
const inCI = Boolean(process.env.CI);
if (!hasJinja2 && !inCI) {
  console.warn(
    `chat-template cross-check: skipped, ${PYTHON} cannot import jinja2 (apt-get install python3-jinja2); CI fails instead of skipping`,
  );
}

interface Case {
  label: string;
  config: Record<string, unknown>;
  messages: ChatMessage[];
  addGenerationPrompt: boolean;
  tools?: unknown[];
  variables?: Record<string, unknown>;
  name?: string;
}

describe.skipIf(!hasJinja2 && !inCI)('chat templates cross-checked with Python Jinja2', () => {
  beforeAll(() => {
    if (!hasJinja2) {
      throw new Error(
        `${PYTHON} cannot import jinja2 (${probe.error?.message ?? probe.stderr}); CI must install python3-jinja2`,
      );
    }
  });

  it('renders every case to the same string as transformers-style Jinja2', () => {
    const cases: Case[] = [];
    for (const [label, config] of [
      ['qwen2.5', qwen],
      ['llama-3.2', llama],
      ['named', named],
    ] as const) {
      for (const [what, messages] of [
        ['chat', CHAT],
        ['system', WITH_SYSTEM],
        ['awkward', AWKWARD],
      ] as const) {
        for (const addGenerationPrompt of [false, true]) {
          cases.push({
            label: `${label} ${what} ${addGenerationPrompt}`,
            config,
            messages,
            addGenerationPrompt,
          });
        }
      }
    }
    cases.push(
      {
        label: 'qwen tools',
        config: qwen,
        messages: CHAT,
        addGenerationPrompt: true,
        tools: TOOLS,
      },
      {
        label: 'qwen tool call',
        config: qwen,
        messages: TOOL_CALL,
        addGenerationPrompt: true,
        tools: TOOLS,
      },
      {
        label: 'llama tools',
        config: llama,
        messages: CHAT,
        addGenerationPrompt: true,
        tools: TOOLS,
      },
      {
        label: 'llama tool call',
        config: llama,
        messages: TOOL_CALL,
        addGenerationPrompt: true,
        tools: TOOLS,
      },
      {
        label: 'llama date_string',
        config: llama,
        messages: WITH_SYSTEM,
        addGenerationPrompt: true,
        variables: { date_string: '26 Jul 2024', tools_in_user_message: false },
      },
      {
        label: 'named tool_use',
        config: named,
        messages: CHAT,
        addGenerationPrompt: false,
        tools: TOOLS,
      },
      {
        label: 'named raises',
        config: named,
        messages: [{ role: 'assistant', content: 'x' }],
        addGenerationPrompt: false,
        tools: TOOLS,
      },
    );
    const input = {
      cases: cases.map((c) => ({
        template: chatTemplateOf(c.config, { withTools: c.tools !== undefined }),
        messages: c.messages,
        add_generation_prompt: c.addGenerationPrompt,
        tools: c.tools ?? null,
        special_tokens: templateSpecialTokens(c.config),
        variables: c.variables ?? {},
        now: NOW_ISO,
      })),
    };
    const r = spawnSync(PYTHON, [SCRIPT], { input: JSON.stringify(input), encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const py = JSON.parse(r.stdout) as ({ text: string } | { error: string })[];
    expect(py.length).toBe(cases.length);
    for (const [i, c] of cases.entries()) {
      const want = py[i]!;
      let got: { text: string } | { error: string };
      try {
        got = {
          text: applyChatTemplate(c.config, c.messages, {
            addGenerationPrompt: c.addGenerationPrompt,
            ...(c.tools ? { tools: c.tools } : {}),
            ...(c.variables ? { variables: c.variables } : {}),
            now: NOW,
          }),
        };
      } catch (e) {
        got = {
          error:
            (e as Error).message.split('refused the conversation: ')[1] ?? (e as Error).message,
        };
      }
      expect(got, c.label).toEqual(want);
    }
  });
});
