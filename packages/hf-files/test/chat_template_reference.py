"""Render chat templates the way Python's transformers does (apply_chat_template, tokenize=False).

Reads {"cases": [...]} as JSON on stdin; each case has template, messages, add_generation_prompt,
tools, special_tokens, variables and now (an ISO local time for strftime_now). Writes a JSON list
with, per case, {"text": ...} or {"error": ...}.

The environment matches transformers' chat template compiler: a sandboxed, immutable Jinja2
environment with trim_blocks and lstrip_blocks, the loop-control extension, a tojson filter that
keeps non-ASCII characters and accepts indent/separators/sort_keys, and the raise_exception and
strftime_now globals. The render variables are messages, tools, documents,
add_generation_prompt, the special tokens, then the extra variables.
"""

import json
import sys
from datetime import datetime

import jinja2
from jinja2.ext import loopcontrols
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise jinja2.exceptions.TemplateError(message)


def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(
        value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys
    )


def render(case):
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    now = datetime.fromisoformat(case["now"])
    env.globals["strftime_now"] = lambda fmt: now.strftime(fmt)
    template = env.from_string(case["template"])
    kwargs = dict(case.get("special_tokens") or {})
    kwargs.update(case.get("variables") or {})
    try:
        text = template.render(
            messages=case["messages"],
            tools=case.get("tools"),
            documents=None,
            add_generation_prompt=case.get("add_generation_prompt", False),
            **kwargs,
        )
        return {"text": text}
    except jinja2.exceptions.TemplateError as e:
        return {"error": str(e)}


def main():
    cases = json.load(sys.stdin)["cases"]
    json.dump([render(c) for c in cases], sys.stdout, ensure_ascii=False)


if __name__ == "__main__":
    main()
