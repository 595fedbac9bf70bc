export default {
  displayName: 'protocol',
  preset: '../../jest.preset.js',
  rootDir: '.',
};
