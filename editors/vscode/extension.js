// The VS Code side of primusc: start `primusc lsp` for .prx files and show a diagnostic code's
// explanation when its link (primusc-explain:CODE, set by the server) is opened.
'use strict';
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');
const { execFile } = require('child_process');

let client;

function serverOptions(command) {
  return { command, args: ['lsp'] };
}

function activate(context) {
  const command = vscode.workspace.getConfiguration('primusc').get('path') || 'primusc';
  client = new LanguageClient('primusc', 'primusc', serverOptions(command), {
    documentSelector: [{ scheme: 'file', language: 'primus' }, { scheme: 'untitled', language: 'primus' }],
  });
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider('primusc-explain', {
      provideTextDocumentContent(uri) {
        // the code comes from the server; execFile passes it as one argument, never through a shell
        return new Promise((resolve) => {
          execFile(command, ['explain', uri.path], (err, stdout, stderr) => resolve(err ? stderr || String(err) : stdout));
        });
      },
    }),
  );
  return client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate, serverOptions };
