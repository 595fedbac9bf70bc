export default {
  displayName: 'model-profiles',
  preset: '../../jest.preset.js',
  rootDir: '.',
};
