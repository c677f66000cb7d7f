/** Replace this file with the package's first concept (one exported function per file). */
export function hello(name: string): string {
  if (name.length === 0) throw new TypeError('hello: `name` must be a non-empty string');
  return `hello, ${name}`;
}
