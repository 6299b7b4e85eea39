const ASCII_UPPER = /[A-Z]/;
const ASCII_UPPER_RUNS = /[A-Z]+/g;

/**
 * Lower-cases A-Z only. Every case-insensitive comparison of the rule engine folds
 * ASCII letters and nothing else, because that is the one folding PostgreSQL applies
 * identically on every server: `lower(x COLLATE "C")` and `~*` under `COLLATE "C"`
 * fold A-Z only, whatever the database locale, while full Unicode folding differs
 * between JavaScript, glibc and ICU. The in-memory engine and the preview SQL must
 * agree on every row, so both use this folding (`É` and `é` are different letters).
 */
export function asciiLower(value: string): string {
  return ASCII_UPPER.test(value) ? value.replace(ASCII_UPPER_RUNS, (run) => run.toLowerCase()) : value;
}

/**
 * The engine's copy of a string that V8 keeps in its string table. Two such strings
 * compare by identity when they differ, and never go through the slow path V8 takes
 * for the sliced and concatenated strings that `split` and `replace` produce; the
 * rule loop compares thousands of them per request. Property keys are always
 * internalised, so reading one back yields the internalised copy.
 */
export function intern(value: string): string {
  return Object.keys({ [value]: true })[0];
}
