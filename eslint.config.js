import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', '.faheem/', 'dist/', 'docs/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', URL: 'readonly', Buffer: 'readonly', performance: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    // Workflow code runs in Temporal's deterministic sandbox: no Node modules.
    files: ['src/workflows/**/*.ts', 'src/tools/define.ts', 'src/tools/local.ts', 'src/tools/schemas.ts', 'src/hooks/config.ts', 'src/hooks/decision.ts', 'src/hooks/event.ts', 'src/skills/prompt.ts', 'src/skills/front-matter.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['node:*', 'fs', 'path', 'os', 'child_process', 'crypto', 'execa', 'openai'], message: 'workflow code must not use Node APIs or I/O' }] }],
    },
  },
);
