// In a variable, so that bundlers leave the optional native package alone: a bundle without it
// writes the SVG and reports the missing PNG, as a machine without the binary does.
const RESVG = '@resvg/resvg-js';

/** Rasterises an SVG document to PNG bytes (needs the optional `@resvg/resvg-js` binary). */
export async function svgToPng(svg: string): Promise<Uint8Array> {
  let Resvg: typeof import('@resvg/resvg-js').Resvg;
  try {
    ({ Resvg } = (await import(/* @vite-ignore */ RESVG)) as typeof import('@resvg/resvg-js'));
  } catch (err) {
    throw new Error(
      `PNG output needs @resvg/resvg-js with a prebuilt binary for this platform (${process.platform}-${process.arch}); the SVG was still written. Cause: ${(err as Error).message}`,
    );
  }
  return new Resvg(svg, { background: 'white', font: { loadSystemFonts: true } }).render().asPng();
}
