// Python semantics for the JavaScript that hwlib/web/transpile.py generates from hwlib's formulas.
// This file holds no formula: only what Python's built-ins do (errors, division by zero, repr,
// format specs, dict/str methods, difflib's close matches), so the generated code behaves like
// the Python it came from. It evaluates to one object, `$rt`.
(() => {
  "use strict";
  class PyError extends Error {
    constructor(type, message) { super(message); this.pytype = type; this.name = type; }
  }
  const exc = (type, message = "") => new PyError(type, String(message));
  const isDict = (x) => x !== null && typeof x === "object" && !Array.isArray(x) && !x.__class__;
  const truthy = (x) => {
    if (x === null || x === undefined) return false;
    if (Array.isArray(x) || typeof x === "string") return x.length > 0;
    if (isDict(x)) return Object.keys(x).length > 0;
    return Boolean(x);
  };
  const num = (x, op) => {
    if (typeof x !== "number") throw exc("TypeError", `unsupported operand type(s) for ${op}: ${typeName(x)}`);
    return x;
  };
  const div = (a, b) => {
    if (num(b, "/") === 0) throw exc("ZeroDivisionError", "division by zero");
    return num(a, "/") / b;
  };
  const floordiv = (a, b) => {
    if (num(b, "//") === 0) throw exc("ZeroDivisionError", "integer division or modulo by zero");
    return Math.floor(num(a, "//") / b);
  };
  const mod = (a, b) => {
    if (num(b, "%") === 0) throw exc("ZeroDivisionError", "integer modulo by zero");
    const r = num(a, "%") % b;
    return r !== 0 && (r < 0) !== (b < 0) ? r + b : r;
  };
  const pow = (a, b) => {
    num(a, "**"); num(b, "**");
    if (a === 0 && b < 0) throw exc("ZeroDivisionError", "0.0 cannot be raised to a negative power");
    if (a < 0 && !Number.isInteger(b)) throw exc("ValueError", "negative number raised to a fractional power");
    const r = a ** b;
    if (!Number.isFinite(r) && Number.isFinite(a) && Number.isFinite(b)) throw exc("OverflowError", "(34, 'Numerical result out of range')");
    return r;
  };
  const and_ = (a, b) => (typeof a === "boolean" && typeof b === "boolean" ? a && b : a & b);
  const or_ = (a, thunk) => (truthy(a) ? a : thunk());
  const andThen = (a, thunk) => (truthy(a) ? thunk() : a);
  const eq = (a, b) => {
    if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((x, i) => eq(x, b[i]));
    if (isDict(a) && isDict(b)) {
      const ka = Object.keys(a), kb = Object.keys(b);
      return ka.length === kb.length && ka.every((k) => k in b && eq(a[k], b[k]));
    }
    return a === b;
  };
  const iter = (x) => {
    if (Array.isArray(x)) return x;
    if (typeof x === "string") return Array.from(x);
    if (isDict(x)) return Object.keys(x);
    throw exc("TypeError", `'${typeName(x)}' object is not iterable`);
  };
  const contains = (container, x) => {
    if (typeof container === "string") return container.includes(x);
    if (Array.isArray(container)) return container.some((y) => eq(x, y));
    if (isDict(container)) return typeof x === "string" && Object.prototype.hasOwnProperty.call(container, x);
    throw exc("TypeError", `argument of type '${typeName(container)}' is not iterable`);
  };
  const getitem = (obj, key) => {
    if (Array.isArray(obj) || typeof obj === "string") {
      const i = key < 0 ? obj.length + key : key;
      if (!Number.isInteger(i) || i < 0 || i >= obj.length) throw exc("IndexError", "index out of range");
      return obj[i];
    }
    if (isDict(obj) && Object.prototype.hasOwnProperty.call(obj, key)) return obj[key];
    throw exc("KeyError", repr(key));
  };
  const setitem = (obj, key, value) => { obj[key] = value; return null; };
  const slice = (obj, lo, hi) => obj.slice(lo === null ? 0 : lo, hi === null ? undefined : hi);
  // hwlib dataclasses: transpile.py fills `classes` with each one's fields, defaults, methods and
  // properties; instances are plain objects with a __class__ id.
  const classes = {};
  const member = (obj, name) => {
    const cls = obj !== null && typeof obj === "object" && obj.__class__ ? classes[obj.__class__] : null;
    return cls && cls.members[name];
  };
  const MISSING = {};
  const getattr = (obj, name, dflt = MISSING) => {
    const m = member(obj, name);
    if (m && m.property) return m.property(obj);
    if (obj !== null && typeof obj === "object" && !Array.isArray(obj) && name in obj) return obj[name];
    if (dflt !== MISSING) return dflt;
    throw exc("AttributeError", `'${typeName(obj)}' object has no attribute '${name}'`);
  };
  const hasattr = (obj, name) => Boolean(member(obj, name)) || (obj !== null && typeof obj === "object" && !Array.isArray(obj) && name in obj);
  const bindArgs = (name, params, defaults, positional, kwargs) => {
    if (positional.length > params.length) throw exc("TypeError", `${name}() takes ${params.length} arguments but ${positional.length} were given`);
    for (const k of Object.keys(kwargs)) {
      const i = params.indexOf(k);
      if (i < 0) throw exc("TypeError", `${name}() got an unexpected keyword argument '${k}'`);
      if (i < positional.length) throw exc("TypeError", `${name}() got multiple values for argument '${k}'`);
    }
    return params.map((p, i) => {
      if (i < positional.length) return positional[i];
      if (p in kwargs) return kwargs[p];
      if (p in defaults) return defaults[p];
      throw exc("TypeError", `${name}() missing required argument: '${p}'`);
    });
  };
  const callmethod = (obj, name, args, kwargs) => {
    const m = member(obj, name);
    if (m && m.method) return m.method(obj, ...bindArgs(name, m.params.slice(1), {}, args, kwargs));
    if (Object.keys(kwargs).length) throw exc("TypeError", `${name}() takes no keyword arguments here`);
    return method(name, obj, ...args);
  };
  const dict = (pairs) => { const d = {}; for (const [k, v] of pairs) d[k] = v; return d; };
  const items_of = (x) => (isDict(x) ? Object.entries(x) : iter(x));
  const add = (a, b) => (Array.isArray(a) && Array.isArray(b) ? a.concat(b) : a + b);
  const set = (xs) => { const out = []; for (const x of iter(xs)) if (!out.some((y) => eq(x, y))) out.push(x); return out; };
  const unpack = (x, n) => {
    const items = iter(x);
    if (items.length !== n) throw exc("ValueError", `expected ${n} values to unpack, got ${items.length}`);
    return items;
  };
  const construct = (cls, positional, keywords) => {
    const obj = { __class__: cls.id };
    cls.fields.forEach((f, i) => {
      if (i < positional.length) obj[f] = positional[i];
      else if (Object.prototype.hasOwnProperty.call(keywords, f)) obj[f] = keywords[f];
      else if (Object.prototype.hasOwnProperty.call(cls.defaults, f)) obj[f] = cls.defaults[f];
      else if (cls.factories[f]) obj[f] = cls.factories[f] === "dict" ? {} : [];
      else throw exc("TypeError", `${cls.name}() missing required argument: '${f}'`);
    });
    for (const k of Object.keys(keywords)) {
      if (!cls.fields.includes(k)) throw exc("TypeError", `${cls.name}.__init__() got an unexpected keyword argument '${k}'`);
    }
    return cls.frozen ? Object.freeze(obj) : obj;
  };
  const call = (f, ...args) => (typeof f === "string" ? exc(f, args[0]) : f(...args));
  const typeName = (x) => {
    if (x === null || x === undefined) return "NoneType";
    if (typeof x === "boolean") return "bool";
    if (typeof x === "number") return Number.isInteger(x) && Math.abs(x) < 1e16 ? "int" : "float";
    if (typeof x === "string") return "str";
    if (Array.isArray(x)) return "list";
    if (typeof x === "function") return "function";
    return x.__class__ ? (classes[x.__class__] || { name: x.__class__ }).name : "dict";
  };
  const type = (x) => ({ __module__: x && x.__class__ ? x.__class__.replace(/\.[^.]*$/, "") : "builtins", __name__: typeName(x) });
  const TYPES = {
    number: (x) => typeof x === "number", int: (x) => Number.isInteger(x), bool: (x) => typeof x === "boolean",
    str: (x) => typeof x === "string", list: (x) => Array.isArray(x), dict: isDict,
    NoneType: (x) => x === null || x === undefined,
  };
  const isinstance = (x, types) => types.some((t) => (TYPES[t] ? TYPES[t](x) : x && x.__class__ === t));

  // --- str() and repr() of numbers: Python's shortest round-trip digits. Whole numbers print
  // without ".0" (JavaScript has no int/float distinction); tests compare messages modulo ".0".
  const floatRepr = (x) => {
    if (Number.isNaN(x)) return "nan";
    if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
    if (Number.isInteger(x) && Math.abs(x) < 1e16) return Object.is(x, -0) ? "-0" : String(x);
    const [mant, e] = x.toExponential().split("e");
    const exp = Number(e);
    if (exp < -4 || exp >= 16) return `${mant}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
    const digits = mant.replace("-", "").replace(".", "");
    const sign = x < 0 ? "-" : "";
    if (exp < 0) return `${sign}0.${"0".repeat(-exp - 1)}${digits}`;
    const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
    const frac = digits.slice(exp + 1);
    return `${sign}${intPart}.${frac || "0"}`;
  };
  const strRepr = (s) => {
    const q = s.includes("'") && !s.includes('"') ? '"' : "'";
    const body = s.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t");
    return q + (q === "'" ? body.replace(/'/g, "\\'") : body) + q;
  };
  const repr = (x) => {
    if (x === null || x === undefined) return "None";
    if (typeof x === "boolean") return x ? "True" : "False";
    if (typeof x === "number") return floatRepr(x);
    if (typeof x === "string") return strRepr(x);
    if (Array.isArray(x)) return "[" + x.map(repr).join(", ") + "]";
    if (x.__class__) return `${typeName(x)}(${Object.keys(x).filter((k) => k !== "__class__").map((k) => `${k}=${repr(x[k])}`).join(", ")})`;
    return "{" + Object.keys(x).map((k) => `${strRepr(k)}: ${repr(x[k])}`).join(", ") + "}";
  };
  const str = (x) => (typeof x === "string" ? x : repr(x));

  // --- format specs: [sign][,][.precision][e|f|g|%|d], Python's rounding (ties to even on the
  // exact binary value).
  const roundDigits = (x, digits, expo) => {
    if (!expo && x >= 1e21) return BigInt(x).toString() + (digits ? "." + "0".repeat(digits) : "");
    // toFixed / toExponential round exact ties away from zero; Python rounds them to even.
    const fixed = expo ? x.toExponential(digits) : x.toFixed(digits);
    const longer = expo ? x.toExponential(Math.min(100, digits + 30)) : x.toFixed(Math.min(100, digits + 30));
    const [lm, le] = longer.split("e");
    const tail = lm.replace("-", "").split(".")[1] || "";
    const rest = tail.slice(digits);
    if (!/^50*$/.test(rest)) return fixed;
    const [fm, fe] = fixed.split("e");
    const kept = (fm.replace("-", "").replace(".", ""));
    const last = Number(kept[kept.length - 1]);
    if (last % 2 === 0) return fixed;           // already even
    // toFixed rounded up to an odd digit: round down instead (truncate the longer form).
    const truncated = lm.slice(0, lm.length - rest.length).replace(/\.$/, "");
    return expo ? `${truncated}e${le}` : truncated;
  };
  const group = (s) => {
    const [i, f] = s.split(".");
    const g = i.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
    return f === undefined ? g : `${g}.${f}`;
  };
  const expPad = (s) => s.replace(/e([+-])(\d)$/, "e$10$2");
  const format = (x, spec) => {
    if (spec === "") return str(x);
    const m = /^([+ -])?(,)?(?:\.(\d+))?([efg%d])?$/.exec(spec);
    if (!m || typeof x !== "number") throw exc("ValueError", `format spec ${strRepr(spec)} is not supported in the browser`);
    const [, sign, comma, precText, type = "g"] = m;
    const p = precText === undefined ? 6 : Number(precText);
    if (!Number.isFinite(x)) return Number.isNaN(x) ? "nan" : x > 0 ? "inf" : "-inf";
    const neg = x < 0 || Object.is(x, -0), a = Math.abs(x);
    let body;
    if (type === "f") body = roundDigits(a, p, false);
    else if (type === "%") body = roundDigits(a * 100, p, false) + "%";
    else if (type === "d") body = String(Math.round(a));
    else if (type === "e") body = expPad(roundDigits(a, p, true));
    else {
      const P = p === 0 ? 1 : p;
      const exp = a === 0 ? 0 : Number(roundDigits(a, P - 1, true).split("e")[1]);
      if (exp >= -4 && exp < P) body = roundDigits(a, P - 1 - exp, false);
      else body = expPad(roundDigits(a, P - 1, true));
      body = body.replace(/(\.\d*?)0+(e|$)/, "$1$2").replace(/\.(e|$)/, "$1");
    }
    if (comma) body = body.includes("e") ? body : group(body.replace("%", "")) + (body.endsWith("%") ? "%" : "");
    return (neg ? "-" : sign === "+" ? "+" : sign === " " ? " " : "") + body;
  };

  // --- built-in functions
  const float = (x) => {
    if (typeof x === "number") return x;
    if (typeof x === "boolean") return x ? 1 : 0;
    if (typeof x === "string") {
      const t = x.trim().toLowerCase().replace(/_/g, "");
      if (/^[+-]?(inf|infinity)$/.test(t)) return t.startsWith("-") ? -Infinity : Infinity;
      if (/^[+-]?nan$/.test(t)) return NaN;
      if (/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) return Number(t);
    }
    throw exc("ValueError", `could not convert string to float: ${repr(x)}`);
  };
  const int = (x) => {
    if (typeof x === "string") {
      if (/^\s*[+-]?\d+\s*$/.test(x)) return Number(x.trim());
      throw exc("ValueError", `invalid literal for int() with base 10: ${repr(x)}`);
    }
    if (typeof x === "boolean") return x ? 1 : 0;
    if (Number.isNaN(x)) throw exc("ValueError", "cannot convert float NaN to integer");
    if (!Number.isFinite(x)) throw exc("OverflowError", "cannot convert float infinity to integer");
    return Math.trunc(x);
  };
  const len = (x) => (isDict(x) ? Object.keys(x).length : iter(x).length);
  const sum = (xs, start = 0) => iter(xs).reduce((acc, v) => acc + v, start);
  const extreme = (name, better) => (...args) => {
    const items = args.length === 1 ? iter(args[0]) : args;
    if (!items.length) throw exc("ValueError", `${name}() iterable argument is empty`);
    return items.reduce((best, v) => (better(v, best) ? v : best));
  };
  const min = extreme("min", (v, best) => v < best);
  const max = extreme("max", (v, best) => v > best);
  const domain = (ok, f) => (x) => { if (!ok(x)) throw exc("ValueError", "math domain error"); return f(x); };
  const floor = (x) => int(Math.floor(x));
  const ceil = (x) => int(Math.ceil(x));
  const log = (x, base) => {
    if (!(x > 0) || (base !== undefined && !(base > 0))) throw exc("ValueError", "math domain error");
    return base === undefined ? Math.log(x) : Math.log(x) / Math.log(base);
  };
  const sorted = (xs) => iter(xs).slice().sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

  // difflib.get_close_matches (no junk heuristics: they only apply to sequences of 200+ items)
  const matchingCharacters = (a, b) => {
    let total = 0;
    const queue = [[0, a.length, 0, b.length]];
    while (queue.length) {
      const [alo, ahi, blo, bhi] = queue.pop();
      let besti = alo, bestj = blo, bestsize = 0, j2len = new Map();
      for (let i = alo; i < ahi; i++) {
        const next = new Map();
        for (let j = blo; j < bhi; j++) {
          if (a[i] !== b[j]) continue;
          const k = (j2len.get(j - 1) || 0) + 1;
          next.set(j, k);
          if (k > bestsize) { besti = i - k + 1; bestj = j - k + 1; bestsize = k; }
        }
        j2len = next;
      }
      if (bestsize) {
        total += bestsize;
        if (alo < besti && blo < bestj) queue.push([alo, besti, blo, bestj]);
        if (besti + bestsize < ahi && bestj + bestsize < bhi) queue.push([besti + bestsize, ahi, bestj + bestsize, bhi]);
      }
    }
    return total;
  };
  const ratio = (a, b) => (a.length + b.length ? (2 * matchingCharacters(a, b)) / (a.length + b.length) : 1);
  const get_close_matches = (word, possibilities, n = 3, cutoff = 0.6) => {
    const scored = iter(possibilities).map((x) => [ratio(x, word), x]).filter(([s]) => s >= cutoff);
    scored.sort((p, q) => (q[0] - p[0]) || (q[1] > p[1] ? 1 : q[1] < p[1] ? -1 : 0));
    return scored.slice(0, n).map(([, x]) => x);
  };

  // --- methods of str, list and dict that the formulas use
  const methods = {
    lower: (s) => s.toLowerCase(), upper: (s) => s.toUpperCase(), strip: (s) => s.trim(),
    lstrip: (s, chars) => (chars === undefined ? s.trimStart() : s.replace(new RegExp(`^[${chars.replace(/[\]\\^-]/g, "\\$&")}]+`), "")),
    rstrip: (s, chars) => (chars === undefined ? s.trimEnd() : s.replace(new RegExp(`[${chars.replace(/[\]\\^-]/g, "\\$&")}]+$`), "")),
    split: (s, sep) => (sep === undefined ? s.trim().split(/\s+/).filter(Boolean) : s.split(sep)),
    join: (sep, xs) => iter(xs).join(sep), replace: (s, a, b) => s.split(a).join(b),
    startswith: (s, p) => s.startsWith(p), endswith: (s, p) => s.endsWith(p),
    isalnum: (s) => s.length > 0 && /^[\p{L}\p{N}]+$/u.test(s), isdigit: (s) => s.length > 0 && /^\d+$/.test(s),
    keys: (d) => Object.keys(d), values: (d) => Object.values(d), items: (d) => Object.entries(d),
    get: (d, k, dflt = null) => (Object.prototype.hasOwnProperty.call(d, k) ? d[k] : dflt),
    setdefault: (d, k, v = null) => { if (!Object.prototype.hasOwnProperty.call(d, k)) d[k] = v; return d[k]; },
    append: (xs, v) => { xs.push(v); return null; },
    pop: (xs, i) => {
      if (!Array.isArray(xs)) throw exc("AttributeError", "pop is only available on lists in the browser");
      const at = i === undefined ? xs.length - 1 : i < 0 ? xs.length + i : i;
      if (!xs.length || at < 0 || at >= xs.length) throw exc("IndexError", "pop index out of range");
      return xs.splice(at, 1)[0];
    },
    insert: (xs, i, v) => { xs.splice(Math.max(0, Math.min(i < 0 ? xs.length + i : i, xs.length)), 0, v); return null; },
    update: (d, other) => { Object.assign(d, isDict(other) ? other : dict(other)); return null; },
    partition: (s, sep) => { const i = s.indexOf(sep); return i < 0 ? [s, "", ""] : [s.slice(0, i), sep, s.slice(i + sep.length)]; },
    copy: (x) => (Array.isArray(x) ? x.slice() : { ...x }),
  };
  const method = (name, obj, ...args) => {
    if (!(name in methods)) throw exc("AttributeError", `method ${name} is not available in the browser`);
    return methods[name](obj, ...args);
  };

  return {
    PyError, exc, truthy, div, floordiv, mod, pow, and_, or_, andThen, eq, iter, contains, getitem,
    setitem, slice, getattr, hasattr, dict, unpack, construct, call, typeName, type, isinstance,
    classes, bindArgs, callmethod, items_of, add, set, any: (xs) => iter(xs).some(truthy), all: (xs) => iter(xs).every(truthy),
    repr, str, format, float, int, len, sum, min, max, floor, ceil, log, sorted, get_close_matches,
    method, sqrt: domain((x) => x >= 0, Math.sqrt), log10: domain((x) => x > 0, Math.log10),
    log2: domain((x) => x > 0, Math.log2), exp: Math.exp, isnan: (x) => Number.isNaN(float(x)), isinf: (x) => Math.abs(float(x)) === Infinity,
    isfinite: (x) => Number.isFinite(float(x)), abs: (x) => Math.abs(num(x, "abs()")),
    ndim: (x) => (Array.isArray(x) ? 1 : 0), bool: truthy, list: (x) => iter(x).slice(),
    range: (a, b, step = 1) => {
      if (b === undefined) { b = a; a = 0; }
      if (![a, b, step].every(Number.isInteger)) throw exc("TypeError", "range() takes whole numbers");
      if (step === 0) throw exc("ValueError", "range() arg 3 must not be zero");
      const out = [];
      for (let v = a; step > 0 ? v < b : v > b; v += step) out.push(v);
      return out;
    },
  };
})()
