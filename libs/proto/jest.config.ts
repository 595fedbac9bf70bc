export default {
  displayName: 'proto',
  preset: '../../jest.preset.js',
  rootDir: '.',
};
