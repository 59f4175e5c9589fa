import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    // Workflow code runs in Temporal's deterministic sandbox: no Node modules.
    files: [
      'src/workflows/**/*.ts',
      'src/tools/define.ts',
      'src/tools/local.ts',
      'src/tools/schemas.ts',
      'src/tools/interrupted.ts',
      'src/tools/risk.ts',
      'src/errors.ts',
      'src/failure-types.ts',
      'src/text.ts',
      'src/hooks/config.ts',
      'src/hooks/decision.ts',
      'src/hooks/event.ts',
      'src/skills/prompt.ts',
      'src/skills/front-matter.ts',
    ],
    rules: {
      'no-restricted-imports': [
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
);
