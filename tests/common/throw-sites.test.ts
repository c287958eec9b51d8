// Every error the framework and the runners raise is a DisaggBenchError (runners/common/errors.ts):
// this reads every `.ts` file under framework/ and runners/ with the TypeScript parser (so comments,
// strings and line breaks cannot hide or fake a throw) and checks each `throw`, and each error built
// to reject a promise, against the classes declared there.
//   throw new C(...)            C must reach DisaggBenchError through the declared classes
//   throw f(...) / obj.f(...)   f must be declared here returning such a class (its return type says so)
//   throw Object.assign(new C(...), {...})   as `new C`
//   throw e                     e must be an error raised elsewhere that is passed on (what a catch
//                               clause caught, an error handler's parameter), or declared as such a class
//   new Error(...), new RangeError(...)...   nowhere: a built-in error class is never constructed
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const FOLDERS = ['framework', 'runners'];
const ROOT_CLASS = 'DisaggBenchError';
const BUILT_IN_ERRORS = new Set(['Error', 'TypeError', 'RangeError', 'SyntaxError', 'ReferenceError', 'EvalError', 'URIError', 'AggregateError']);

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(rel);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [rel] : [];
  });
}

function parse(rel: string, text = readFileSync(path.join(root, rel), 'utf8')): ts.SourceFile {
  return ts.createSourceFile(rel, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
}

function walk(node: ts.Node, visit: (n: ts.Node) => void): void {
  visit(node);
  node.forEachChild((child) => walk(child, visit));
}

/** What the scan knows of the source: each class's parent, and each function's declared return type. */
interface Declarations {
  parentOf: Map<string, string>;
  /** By function name, by `file#name` (a file's own functions) and by `Owner.member` (methods). */
  returnTypes: Map<string, string[]>;
  /** Variables, parameters and fields with a declared type, by name. */
  typedNames: Map<string, string[]>;
}

function declarations(files: ts.SourceFile[]): Declarations {
  const parentOf = new Map<string, string>();
  const returnTypes = new Map<string, string[]>();
  const typedNames = new Map<string, string[]>();
  const add = (map: Map<string, string[]>, name: string, type: string) => map.set(name, [...(map.get(name) ?? []), type]);
  for (const file of files) {
    walk(file, (n) => {
      if (ts.isClassDeclaration(n) && n.name) {
        const parent = n.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0]?.expression.getText(file);
        if (parent) parentOf.set(n.name.text, parent);
      }
      const method = ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isMethodSignature(n);
      const fnProperty = ts.isPropertySignature(n) && n.type !== undefined && ts.isFunctionTypeNode(n.type);
      if ((method || fnProperty) && n.name && n.type) {
        const type = (ts.isFunctionTypeNode(n.type) ? n.type.type : n.type).getText(file);
        const name = n.name.getText(file);
        add(returnTypes, name, type);
        if (ts.isFunctionDeclaration(n)) add(returnTypes, `${file.fileName}#${name}`, type);
        const owner = n.parent;
        if ((ts.isInterfaceDeclaration(owner) || ts.isClassDeclaration(owner)) && owner.name) add(returnTypes, `${owner.name.text}.${name}`, type);
      }
      if (ts.isVariableDeclaration(n) && ts.isIdentifier(n.name) && n.initializer && (ts.isArrowFunction(n.initializer) || ts.isFunctionExpression(n.initializer)) && n.initializer.type) {
        add(returnTypes, n.name.text, n.initializer.type.getText(file));
        add(returnTypes, `${file.fileName}#${n.name.text}`, n.initializer.type.getText(file));
      }
      if ((ts.isVariableDeclaration(n) || ts.isParameter(n) || ts.isPropertyDeclaration(n)) && n.type && !ts.isFunctionTypeNode(n.type)) {
        add(typedNames, n.name.getText(file), n.type.getText(file));
      }
    });
  }
  return { parentOf, returnTypes, typedNames };
}

function reachesRoot(name: string, parentOf: Map<string, string>): boolean {
  const seen = new Set<string>();
  for (let c: string | undefined = name; c !== undefined && !seen.has(c); c = parentOf.get(c)) {
    if (c === ROOT_CLASS) return true;
    seen.add(c);
  }
  return false;
}

/** A type annotation naming only our classes (`XferError`, `UsageError | undefined`). */
function namesOurClass(type: string, parentOf: Map<string, string>): boolean {
  const parts = type.split('|').map((p) => p.trim()).filter((p) => p !== 'undefined' && p !== 'null' && p !== 'never');
  return parts.length > 0 && parts.every((p) => reachesRoot(p, parentOf));
}

/** Where `name` is bound, seen from `node`: a catch clause, a function's parameter, or a variable declaration of an enclosing block. */
function bindingOf(node: ts.Node, name: string): ts.CatchClause | ts.ParameterDeclaration | ts.VariableDeclaration | undefined {
  for (let p: ts.Node | undefined = node.parent; p; p = p.parent) {
    if (ts.isCatchClause(p) && p.variableDeclaration?.name.getText() === name) return p;
    if (ts.isFunctionLike(p)) {
      const param = p.parameters.find((q) => q.name.getText() === name);
      if (param) return param;
    }
    if (ts.isBlock(p) || ts.isSourceFile(p)) {
      for (const statement of p.statements) {
        if (!ts.isVariableStatement(statement)) continue;
        const found = statement.declarationList.declarations.find((d) => d.name.getText() === name);
        if (found) return found;
      }
    }
  }
  return undefined;
}

const unwrap = (e: ts.Expression): ts.Expression =>
  ts.isParenthesizedExpression(e) || ts.isAsExpression(e) || ts.isNonNullExpression(e) || ts.isAwaitExpression(e) ? unwrap(e.expression) : e;

/**
 * Whether `name` holds an error raised elsewhere that this code passes on (it builds none: no
 * built-in error is constructed here): what a catch clause caught, a function's error parameter
 * (a stream's 'error' handler, a promise's rejection), a variable declared `unknown` or set from one.
 */
function passedOn(node: ts.Node, name: string): boolean {
  const binding = bindingOf(node, name);
  if (!binding) return false;
  if (ts.isCatchClause(binding)) return true;
  // A parameter holding whatever a caller or an emitter hands over (not one typed as a class of its own).
  if (ts.isParameter(binding)) return !binding.type || /^(unknown|any|Error|NodeJS\.ErrnoException)\b/.test(binding.type.getText());
  if (binding.type?.kind === ts.SyntaxKind.UnknownKeyword) return true;
  const init = binding.initializer && unwrap(binding.initializer);
  return init !== undefined && ts.isIdentifier(init) && passedOn(binding, init.text);
}

/** Return types declared for a call: of `Owner.member` when the receiver's declared type names its owner, else every declaration of that name (this file's first). */
function declaredReturns(call: ts.CallExpression, decl: Declarations): string[] | undefined {
  const file = call.getSourceFile().fileName;
  const target = call.expression;
  if (ts.isPropertyAccessExpression(target)) {
    const owners = ts.isIdentifier(target.expression) ? decl.typedNames.get(target.expression.text) ?? [] : [];
    const members = owners.flatMap((o) => decl.returnTypes.get(`${o}.${target.name.text}`) ?? []);
    return members.length ? members : decl.returnTypes.get(target.name.text);
  }
  return decl.returnTypes.get(`${file}#${target.getText()}`) ?? decl.returnTypes.get(target.getText());
}

/** The declared type of field `name` of the class around `node`. */
function fieldTypes(node: ts.Node, name: string): string[] | undefined {
  for (let p: ts.Node | undefined = node.parent; p; p = p.parent) {
    if (!ts.isClassDeclaration(p)) continue;
    const field = p.members.find((m): m is ts.PropertyDeclaration => ts.isPropertyDeclaration(m) && m.name.getText() === name);
    return field?.type ? [field.type.getText()] : undefined;
  }
  return undefined;
}

const promised = (type: string) => /^Promise<(.*)>$/.exec(type)?.[1] ?? type;

/** Why a thrown expression is not known to be a DisaggBenchError, or undefined when it is. */
function problem(thrown: ts.Expression, decl: Declarations): string | undefined {
  const { parentOf, typedNames } = decl;
  const expr = unwrap(thrown);
  if (ts.isNewExpression(expr)) {
    const name = expr.expression.getText();
    return reachesRoot(name, parentOf) ? undefined : `new ${name}: not a ${ROOT_CLASS}`;
  }
  if (ts.isCallExpression(expr)) {
    const callee = expr.expression.getText();
    if (callee === 'Object.assign' && expr.arguments[0]) return problem(expr.arguments[0], decl);
    const types = declaredReturns(expr, decl);
    if (!types) return `${callee}(): no declaration with a return type found`;
    // A function that explains a caught error: returns it as it is, or one of ours that says more.
    const passes = types.every((t) => promised(t) === 'unknown') && expr.arguments.some((a) => ts.isIdentifier(a) && passedOn(a, a.text));
    if (passes) return undefined;
    return types.every((t) => namesOurClass(promised(t), parentOf)) ? undefined : `${callee}() returns ${types.join(' / ')}`;
  }
  if (ts.isConditionalExpression(expr)) return problem(expr.whenTrue, decl) ?? problem(expr.whenFalse, decl);
  if (ts.isIdentifier(expr) && passedOn(expr, expr.text)) return undefined;
  if (ts.isIdentifier(expr) || ts.isPropertyAccessExpression(expr)) {
    const name = ts.isIdentifier(expr) ? expr.text : expr.name.text;
    const types = ts.isPropertyAccessExpression(expr) && expr.expression.kind === ts.SyntaxKind.ThisKeyword ? fieldTypes(expr, name) : typedNames.get(name);
    return types?.every((t) => namesOurClass(t, parentOf)) ? undefined : `${expr.getText()}: not passed on, nor declared as a ${ROOT_CLASS}`;
  }
  return `${ts.SyntaxKind[expr.kind]}: not a form this check reads`;
}

interface Finding {
  at: string;
  why: string;
}

function findings(files: ts.SourceFile[], decl = declarations(files)): Finding[] {
  const out: Finding[] = [];
  for (const file of files) {
    const at = (n: ts.Node) => `${file.fileName}:${file.getLineAndCharacterOfPosition(n.getStart(file)).line + 1}`;
    walk(file, (n) => {
      if (ts.isThrowStatement(n)) {
        const why = problem(n.expression, decl);
        if (why) out.push({ at: at(n), why });
      }
      if (ts.isNewExpression(n) && ts.isIdentifier(n.expression) && BUILT_IN_ERRORS.has(n.expression.text)) {
        out.push({ at: at(n), why: `new ${n.expression.text}: a built-in error, not a ${ROOT_CLASS}` });
      }
    });
  }
  return out;
}

describe('every error raised in framework/ and runners/ is a DisaggBenchError', () => {
  const files = FOLDERS.flatMap(sourceFiles).map((rel) => parse(rel));
  const decl = declarations(files);

  it('the scan reads the source: it finds the throws and the hierarchy', () => {
    let throws = 0;
    for (const f of files) walk(f, (n) => void (ts.isThrowStatement(n) && throws++));
    expect(throws).toBeGreaterThan(300);
    for (const name of ['UsageError', 'XferError', 'TransferError', 'ConfigError', 'SchedulerError']) expect(reachesRoot(name, decl.parentOf), name).toBe(true);
  });

  it('no throw, and no error built for a promise, is anything else', () => {
    expect(findings(files, decl).map((f) => `${f.at}: ${f.why}`)).toEqual([]);
  });

  it('finds each form of a foreign throw (the check can fail)', () => {
    const planted = parse(
      'planted.ts',
      `class Mine extends DisaggBenchError {}
       class Theirs extends Error {}
       function ours(): Mine { return new Mine('x'); }
       function loose() { return new Mine('x'); }
       export function f(e: unknown, t: Theirs) {
         throw new Error('plain');
         throw new Theirs('x');
         throw loose();
         throw t;
         throw Object.assign(new RangeError('r'), { code: 1 });
         Promise.reject(new TypeError('t'));
         throw new Mine('fine');
         throw ours();
         try { f(e, t); } catch (caught) { throw caught; }
       }`,
    );
    const found = findings([planted], declarations([...files, planted]));
    expect(found.map((f) => f.at)).toEqual(['planted.ts:6', 'planted.ts:6', 'planted.ts:7', 'planted.ts:8', 'planted.ts:9', 'planted.ts:10', 'planted.ts:10', 'planted.ts:11']);
  });
});
