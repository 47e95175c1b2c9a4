// ESLint with typescript-eslint's type-aware rules (docs/decisions.md, "A linter"). `npm run lint`
// lints src/, test/ and bench/ against tsconfig.json, the project tsc checks. Every rule turned off
// or tuned here says why; a line that breaks a rule on purpose names the rule and why beside it.
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  { ignores: ['dist/**', 'dist.*/**', 'data/**', 'coverage/**', '.bench/**', 'test-results/**', 'sdks/*/dist/**'] },
  tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // An async function without await is how a Promise-returning interface is implemented here
      // (a throw becomes a rejection, as the callers expect); the rule would ask for Promise.resolve wrappers.
      '@typescript-eslint/require-await': 'off',
      // A leading underscore marks a parameter an interface makes us take, or a field a rest pattern drops.
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Passing on a caught error (typed unknown) as it came is not throwing a non-error.
      '@typescript-eslint/only-throw-error': ['error', { allowThrowingUnknown: true }],
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
    },
  },
  {
    // Kysely's documented convention: a migration takes Kysely<any>, so that it never depends on
    // today's schema type; prepared statements serve every schema and transaction the same way.
    files: ['src/storage/migrations/**/*.ts', 'src/storage/prepared-query.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    // The JSON reader compares char codes (numbers) with the numeric const enum that names them.
    files: ['src/ingest/formats/json-values.ts'],
    rules: { '@typescript-eslint/no-unsafe-enum-comparison': 'off' },
  },
  {
    // Tests and benchmarks read answers as JSON (inject()'s res.json() and JSON.parse are `any`)
    // and check their shape with expect, which is the check these rules would ask for by casts.
    // They save and restore methods (process.stdout.write) and print whatever was thrown.
    files: ['test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/unbound-method': 'off',
      '@typescript-eslint/restrict-template-expressions': 'off',
    },
  },
  {
    // The pages' own scripts run in the browser and are no part of the TypeScript project.
    files: ['src/web/assets/**/*.js'],
    extends: [tseslint.configs.disableTypeChecked],
  },
);
