export default {
  displayName: 'code-bounds',
  preset: '../../jest.preset.js',
  rootDir: '.',
};
