export default {
  displayName: 'safety',
  preset: '../../jest.preset.js',
  rootDir: '.',
};
