export default {
  displayName: 'service-kit',
  preset: '../../jest.preset.js',
  rootDir: '.',
};
