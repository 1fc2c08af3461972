// Loads the extension's main module (from an unpacked .vsix when its folder is given, else from
// the sources) with `vscode` and the language client stubbed, calls activate(), and checks that it
// starts a language client running `primusc lsp` on .prx documents. Prints "ok" or exits 1.
//   node test/activate.js [UNPACKED_VSIX_DIR]
'use strict';
const assert = require('assert');
const Module = require('module');
const path = require('path');

const root = process.argv[2] ? path.join(process.argv[2], 'extension') : path.join(__dirname, '..');
const manifest = require(path.join(root, 'package.json'));
const started = [];
const providers = [];

const stubs = {
  vscode: {
    workspace: {
      getConfiguration: (section) => ({ get: (key) => (section === 'primusc' && key === 'path' ? 'primusc' : undefined) }),
      registerTextDocumentContentProvider: (scheme, provider) => { providers.push(scheme); return { dispose() {} }; },
    },
  },
  'vscode-languageclient/node': {
    LanguageClient: class {
      constructor(id, name, server, client) { Object.assign(this, { id, name, server, client }); }
      start() { started.push(this); return Promise.resolve(); }
      stop() { return Promise.resolve(); }
    },
  },
};
const load = Module._load;
Module._load = function (request, parent, isMain) {
  if (Object.prototype.hasOwnProperty.call(stubs, request)) return stubs[request];
  return load.call(this, request, parent, isMain);
};

(async () => {
  const extension = require(path.join(root, manifest.main));
  const context = { subscriptions: [] };
  await extension.activate(context);
  assert.strictEqual(started.length, 1, 'activate() starts one language client');
  const [client] = started;
  assert.strictEqual(client.server.command, 'primusc');
  assert.deepStrictEqual(client.server.args, ['lsp']);
  assert.ok(client.client.documentSelector.some((s) => s.language === 'primus'));
  assert.deepStrictEqual(providers, ['primusc-explain']);
  assert.ok(manifest.activationEvents.includes('onLanguage:primus'));
  const language = manifest.contributes.languages.find((l) => l.id === 'primus');
  assert.ok(language.extensions.includes('.prx'));
  await extension.deactivate();
  console.log('ok');
})().catch((err) => { console.error(err); process.exit(1); });
