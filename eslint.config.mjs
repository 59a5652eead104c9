// typescript-eslint, flat config (`npm run lint`): the recommended type-checked set on every TypeScript file the main
// tsconfig covers, at full strength; each rule left off says why, on the line above it.
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['node_modules/', 'dist/', 'bench/results/', 'daemon/simulator/fixtures/', 'test/artifacts/', '**/*.mjs', '**/*.cjs'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Left off, each for a reason that holds for the whole tree:
      // - `any` in the kernel's registries (`CommandDefinition<string, any, …>`): a registry holds definitions of every
      //   payload and state type, and `unknown` there would refuse each concrete definition by variance.
      '@typescript-eslint/no-explicit-any': 'off',
      // - async functions that satisfy a Promise-returning interface without awaiting (an in-memory port, a step).
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/no-unused-vars': [
        'error',
        // `_`-named: a rest sibling left out on purpose (`{ secret: _secret, ...safe }`), or a parameter an interface needs.
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
    },
  },
  {
    // Tests read the JSON they assert on as `any` (an answer's body, a stored event): the assertion is the type check.
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      // `expect(fake.method).toHaveBeenCalled()` passes a method unbound by design.
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // Prototype patches keep the library's own method and call it with `.call(this)`: unbound on purpose.
    files: ['services/platform/nats/answeredRequests.ts', 'services/platform/nats/coalescedWrites.ts'],
    rules: { '@typescript-eslint/unbound-method': 'off' },
  },
  {
    // Redfish documents are untyped JSON trees: `String(doc.Id ?? '')` of a member is what a mockup's reader means.
    files: ['daemon/simulator/bmc/**/*.ts'],
    rules: { '@typescript-eslint/no-base-to-string': 'off' },
  },
  {
    // The web console runs in a browser: its globals are the DOM's, not Node's. Its types come from
    // services/console/tsconfig.json (the DOM libs), which the project service finds as the nearest tsconfig.
    files: ['services/console/app/**/*.{ts,tsx}'],
    languageOptions: { globals: globals.browser },
  },
);
