export default {
  displayName: 'test-kit',
  preset: '../../jest.preset.js',
  rootDir: '.',
};
