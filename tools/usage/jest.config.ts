export default {
  displayName: 'usage-cli',
  preset: '../../jest.preset.js',
  rootDir: '.',
};
