export default {
  displayName: 'launcher',
  preset: '../../jest.preset.js',
  rootDir: '.',
};
