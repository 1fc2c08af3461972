// Tokenizes files with the real TextMate engine VS Code uses (vscode-textmate on Oniguruma) and
// prints, per file, each line's tokens with their scopes as JSON. tests/editors/test_textmate.py
// decides what is right; this script only runs the engine.
//   node test/tokenize.js FILE...   (a FILE of "-" reads {"name": "text", ...} from stdin)
'use strict';
const fs = require('fs');
const path = require('path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

async function main() {
  const wasm = fs.readFileSync(path.join(path.dirname(require.resolve('vscode-oniguruma')), 'onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources) => new oniguruma.OnigScanner(sources),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scope) => {
      if (scope !== 'source.primus') return null;
      const file = path.join(__dirname, '..', 'syntaxes', 'primus.tmLanguage.json');
      return vsctm.parseRawGrammar(fs.readFileSync(file, 'utf8'), file);
    },
  });
  const grammar = await registry.loadGrammar('source.primus');
  let inputs = {};
  for (const arg of process.argv.slice(2)) {
    if (arg === '-') Object.assign(inputs, JSON.parse(fs.readFileSync(0, 'utf8')));
    else inputs[arg] = fs.readFileSync(arg, 'utf8');
  }
  const out = {};
  for (const [name, text] of Object.entries(inputs)) {
    let stack = vsctm.INITIAL;
    out[name] = text.split('\n').map((line) => {
      const r = grammar.tokenizeLine(line, stack);
      stack = r.ruleStack;
      return r.tokens.map((t) => [t.startIndex, t.endIndex, t.scopes]);
    });
  }
  process.stdout.write(JSON.stringify(out));
}

main().catch((err) => { console.error(err); process.exit(1); });
