export default {
  displayName: 'inference',
  preset: '../../jest.preset.js',
  rootDir: '.',
};
