import ts from 'typescript';

/**
 * The names a TypeScript entry file exports (values and types, `export *` followed), as a user
 * of the package sees them, sorted.
 */
export function publicNames(entry: string): string[] {
  const program = ts.createProgram([entry], {
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    target: ts.ScriptTarget.ES2022,
    noEmit: true,
    skipLibCheck: true,
  });
  const file = program.getSourceFile(entry);
  if (!file) throw new Error(`publicNames: cannot read ${entry}`);
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(file);
  return module
    ? checker
        .getExportsOfModule(module)
        .map((s) => s.name)
        .sort()
    : [];
}
