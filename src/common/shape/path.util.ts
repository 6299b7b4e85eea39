/** A location inside a JSON value: property names and array indexes. */
export type Path = (string | number)[];
export type Problem = [Path, string];

/** `a.b[2].c` for import documents, `a.b.2.c` for API bodies (the validation pipe's form). */
export function formatPath(path: Path, style: 'brackets' | 'dots'): string {
  return path.reduce<string>((acc, seg) => {
    if (typeof seg === 'number') return style === 'brackets' ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : String(seg);
    return acc ? `${acc}.${seg}` : seg;
  }, '');
}
