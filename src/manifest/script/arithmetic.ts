// bash's arithmetic command `(( EXPR ))` where its variables are known: its value (the status is 0 when it is not
// 0) and the variables it assigns (`((n++))`, `((n += 2))`). Integers, variables, + - * / %, comparisons, ! && ||,
// parentheses, ++ and -- before or after a name, = += -= *= /=; anything else is not known.

/** A variable's value: a string, undefined when not known, null when unset (0 in arithmetic). */
type Lookup = (name: string) => string | undefined | null;

/** The value of EXPR and what it assigns; undefined where any part is not known. */
export function arithmetic(expr: string, lookup: Lookup): { value: number; assigned: Map<string, number> } | undefined {
  const tokens = expr.match(/\d+|\$\{?\w+\}?|\w+|\+\+|--|[-+*/%]=|==|!=|<=|>=|&&|\|\||[-+*/%<>=!()]|\S/g) ?? [];
  const assigned = new Map<string, number>();
  let at = 0;
  const peek = (): string | undefined => tokens[at];
  const valueOf = (name: string): number | undefined => {
    if (assigned.has(name)) return assigned.get(name);
    const value = lookup(name);
    if (value === null || value === '') return 0;
    return value !== undefined && /^-?\d+$/.test(value.trim()) ? Number(value) : undefined;
  };
  const nameOf = (token: string | undefined): string | undefined => /^\$?\{?([A-Za-z_]\w*)\}?$/.exec(token ?? '')?.[1];
  // Each level returns the value, or undefined when not known; a failure to read throws.
  const primary = (): number | undefined => {
    const token = tokens[at++];
    if (token === undefined) throw new Error('end');
    if (token === '(') {
      const value = assignment();
      if (tokens[at++] !== ')') throw new Error(')');
      return value;
    }
    if (token === '++' || token === '--') {
      const name = nameOf(tokens[at++]);
      const old = name === undefined ? undefined : valueOf(name);
      if (name === undefined || old === undefined) return undefined;
      assigned.set(name, old + (token === '++' ? 1 : -1));
      return assigned.get(name);
    }
    if (token === '!' || token === '-' || token === '+') {
      const value = primary();
      return value === undefined ? undefined : token === '!' ? Number(value === 0) : token === '-' ? -value : value;
    }
    if (/^\d+$/.test(token)) return Number(token);
    const name = nameOf(token);
    if (name === undefined) throw new Error(token);
    const value = valueOf(name);
    if (peek() === '++' || peek() === '--') {
      const step = tokens[at++] === '++' ? 1 : -1;
      if (value !== undefined) assigned.set(name, value + step);
    }
    return value;
  };
  const binary =
    (operators: readonly string[], next: () => number | undefined, apply: (op: string, a: number, b: number) => number | undefined) =>
    (): number | undefined => {
      let left = next();
      while (operators.includes(peek() ?? '')) {
        const op = tokens[at++] as string;
        const right = next();
        left = left === undefined || right === undefined ? undefined : apply(op, left, right);
      }
      return left;
    };
  const product = binary(['*', '/', '%'], primary, (op, a, b) =>
    op === '*' ? a * b : b === 0 ? undefined : op === '/' ? Math.trunc(a / b) : a % b,
  );
  const sum = binary(['+', '-'], product, (op, a, b) => (op === '+' ? a + b : a - b));
  const compare = binary(['<', '>', '<=', '>='], sum, (op, a, b) =>
    Number(op === '<' ? a < b : op === '>' ? a > b : op === '<=' ? a <= b : a >= b),
  );
  const equal = binary(['==', '!='], compare, (op, a, b) => Number(op === '==' ? a === b : a !== b));
  const and = binary(['&&'], equal, (_, a, b) => Number(a !== 0 && b !== 0));
  const or = binary(['||'], and, (_, a, b) => Number(a !== 0 || b !== 0));
  function assignment(): number | undefined {
    const name = nameOf(peek());
    const op = tokens[at + 1];
    if (name !== undefined && !peek()?.startsWith('$') && op !== undefined && ['=', '+=', '-=', '*=', '/=', '%='].includes(op)) {
      at += 2;
      const right = assignment();
      const old = op === '=' ? 0 : valueOf(name);
      if (right === undefined || old === undefined) return undefined;
      const value =
        op === '='
          ? right
          : op === '+='
            ? old + right
            : op === '-='
              ? old - right
              : op === '*='
                ? old * right
                : right === 0
                  ? undefined
                  : op === '/='
                    ? Math.trunc(old / right)
                    : old % right;
      if (value === undefined) return undefined;
      assigned.set(name, value);
      return value;
    }
    return or();
  }
  try {
    const value = assignment();
    return at === tokens.length && value !== undefined ? { value, assigned } : undefined;
  } catch {
    return undefined;
  }
}
