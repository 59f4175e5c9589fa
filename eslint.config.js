import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import path from 'node:path';
import { ALLOWED_OUTSIDE, inWorkflowRoom, workflowBundle } from './scripts/workflow-files.mjs';
import { ENVIRONMENT_READERS } from './scripts/environment-readers.mjs';

/**
 * A file of the workflow room (a `workflow/` folder of src/) imports at run time only from the room
 * and ALLOWED_OUTSIDE: from the worker's side it takes types only (`import type`, or every name
 * marked `type`). Re-exports count like imports.
 */
const roomImports = {
  meta: {
    type: 'problem',
    schema: [],
    messages: {
      outside: 'workflow code may import only types from the worker side ({{target}}; see scripts/workflow-files.mjs)',
    },
  },
  create(context) {
    const check = (node, source, typeOnly) => {
      if (typeOnly || typeof source !== 'string' || !source.startsWith('.')) return;
      const target = path
        .relative(import.meta.dirname, path.resolve(path.dirname(context.filename), source))
        .split(path.sep)
        .join('/')
        .replace(/\.js$/, '.ts');
      if (inWorkflowRoom(target) || ALLOWED_OUTSIDE.includes(target)) return;
      context.report({ node, messageId: 'outside', data: { target } });
    };
    const allTypes = (specifiers) => specifiers.length > 0 && specifiers.every((s) => s.importKind === 'type' || s.exportKind === 'type');
    return {
      ImportDeclaration: (node) => check(node, node.source.value, node.importKind === 'type' || allTypes(node.specifiers)),
      ExportNamedDeclaration: (node) =>
        node.source && check(node, node.source.value, node.exportKind === 'type' || allTypes(node.specifiers)),
      ExportAllDeclaration: (node) => check(node, node.source.value, node.exportKind === 'type'),
      ImportExpression: (node) => node.source.type === 'Literal' && check(node, node.source.value, false),
    };
  },
};

export default tseslint.config(
  { ignores: ['node_modules/', '.faheem/', 'dist/', 'docs/', '**/*.js', '**/*.mjs', '**/*.cjs', '**/*.cts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      // Type-aware rules: the project service reads tsconfig.json.
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: {
        process: 'readonly',
        console: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        URL: 'readonly',
        Buffer: 'readonly',
        performance: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      // A promise nobody awaits loses its error; node:test's test() and hooks are awaited by the runner.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [
            {
              from: 'package',
              package: 'node:test',
              name: ['test', 'describe', 'it', 'suite', 'before', 'after', 'beforeEach', 'afterEach'],
            },
          ],
        },
      ],
      '@typescript-eslint/no-misused-promises': 'error',
      // A switch over event kinds, statuses or outcomes must name every case (or say default).
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
    },
  },
  {
    // Configuration is read once, at the edge (src/environment.ts): modules take typed Settings, or a
    // ChildEnv handed down when they build a child process's environment; never NodeJS.ProcessEnv.
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "TSQualifiedName[left.name='NodeJS'][right.name='ProcessEnv']",
          message: 'take Settings (the checked variables) or ChildEnv (for a child process) from src/environment.ts',
        },
      ],
    },
  },
  {
    // Only the files of ENVIRONMENT_READERS read process.env.
    files: ['src/**/*.ts'],
    ignores: ENVIRONMENT_READERS,
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'process',
          property: 'env',
          message: 'read settings at the entry point (readSettings) and pass them down; see src/environment.ts',
        },
      ],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node modules. The files are the
    // workflow bundle's own (its real import graph, scripts/workflow-files.mjs), and every workflow/ folder.
    files: [...new Set(['src/**/workflow/**/*.ts', ...workflowBundle().files])],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['node:*', 'fs', 'path', 'os', 'child_process', 'crypto', 'execa', 'openai', '@anthropic-ai/*'],
              message: 'workflow code must not use Node APIs or I/O',
            },
          ],
        },
      ],
    },
  },
  {
    // The workflow room imports nothing from the worker's side but types (ALLOWED_OUTSIDE lists the
    // pure modules it may use; test/unit/repo/workflow-rooms.test.ts checks the bundle against it).
    files: ['src/**/workflow/**/*.ts'],
    plugins: { 'workflow-room': { rules: { 'runtime-imports': roomImports } } },
    rules: { 'workflow-room/runtime-imports': 'error' },
  },
);
