export default {
  displayName: 'edge',
  preset: '../../jest.preset.js',
  rootDir: '.',
};
