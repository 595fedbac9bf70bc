export default {
  displayName: 'router',
  preset: '../../jest.preset.js',
  rootDir: '.',
};
