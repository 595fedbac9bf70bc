export default {
  displayName: 'billing',
  preset: '../../jest.preset.js',
  rootDir: '.',
};
