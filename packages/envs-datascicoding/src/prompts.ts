/** The two halves of an infilling prompt: the model writes what goes between them. */
export interface PromptParts {
  prefix: string;
  suffix: string;
}

/** What the prompt says about the data. */
export interface PromptData {
  /** Human-readable dataset name. */
  title: string;
  /** Rows and features of the full dataset (build_model receives half of the rows). */
  n: number;
  d: number;
}

/** The indentation of a function body: the prefix ends with it and the answer continues it. */
export const BODY_INDENT = '    ';

/** The line that closes every program (the suffix of every prompt). */
export const RETURN_LINE = `${BODY_INDENT}return model`;

const SIGNATURE = 'def build_model(x_train: np.ndarray, y_train: np.ndarray):';

function header(data: PromptData): string {
  return `"""Classifier for the ${data.title} dataset."""\nimport numpy as np\n\n\n`;
}

function request(data: PromptData): string {
  return [
    SIGNATURE,
    `${BODY_INDENT}"""Write the body of this function: import what you need from scikit-learn`,
    `${BODY_INDENT}(and numpy), fit a classifier on x_train and y_train, and store it in \`model\`.`,
    `${BODY_INDENT}The full dataset has shape (${data.n}, ${data.d}); x_train holds half of its rows`,
    `${BODY_INDENT}and y_train their class labels. The model must provide predict_proba.`,
    `${BODY_INDENT}"""`,
    BODY_INDENT,
  ].join('\n');
}

/** Indents an answer as a function body: the first line continues the prefix's indentation. */
export function indentBody(body: string): string {
  const trimmed = body.replace(/\s+$/, '');
  return `${BODY_INDENT}${trimmed}`;
}

/** The first prompt of an episode: header, signature and docstring, then `return model`. */
export function initialPrompt(data: PromptData): PromptParts {
  return { prefix: header(data) + request(data), suffix: `\n${RETURN_LINE}\n` };
}

/**
 * The prompt after a failed attempt: the error, the previous function in full, and a fresh
 * signature to fill in again.
 */
export function reflectionPrompt(
  data: PromptData,
  previousBody: string,
  error: string,
  maxErrorChars = 400,
): PromptParts {
  let message = error.replace(/"""/g, "'''").trim();
  if (message.length > maxErrorChars) message = `${message.slice(0, maxErrorChars)} ...`;
  const previous = indentBody(previousBody).replace(/"""/g, "'''");
  const prefix = [
    header(data),
    `"""Calling the build_model function below failed with this error:\n${message}\nPlease fix it."""\n\n\n`,
    `${SIGNATURE}\n${previous}\n${RETURN_LINE}\n\n\n`,
    `"""The corrected build_model function."""\n\n\n`,
    request(data),
  ].join('');
  return { prefix, suffix: `\n${RETURN_LINE}\n` };
}

/** CodeLlama's infilling layout: `<PRE> prefix <SUF>suffix <MID>`. */
export function infillPrompt(parts: PromptParts): string {
  return `<PRE> ${parts.prefix} <SUF>${parts.suffix} <MID>`;
}

/**
 * Removes a final line that is a bare `return` (what a generation stopped on the token `return`
 * leaves behind; it would make build_model return None before the suffix's `return model`).
 */
export function stripTrailingReturn(body: string): string {
  return body.replace(/(^|\n)[ \t]*return[ \t]*\s*$/, '');
}

/**
 * The module that is executed for an answer: numpy import, build_model with the body, return.
 * A trailing bare `return` is dropped unless `keepTrailingReturn` is set.
 */
export function assembleProgram(
  body: string,
  n: number,
  d: number,
  keepTrailingReturn = false,
): string {
  if (!keepTrailingReturn) body = stripTrailingReturn(body);
  return [
    'import numpy as np',
    '',
    '',
    SIGNATURE,
    `${BODY_INDENT}"""Trained with x_train in shape (${n}, ${d})."""`,
    indentBody(body),
    RETURN_LINE,
    '',
  ].join('\n');
}
