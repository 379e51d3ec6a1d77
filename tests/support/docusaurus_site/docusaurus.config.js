// The test site around a book's docs (tests/support/docusaurus_site.py copies them to ./docs and builds it):
// Docusaurus's classic preset, defaults everywhere a book owner would keep them.
module.exports = {
  title: 'bookrag test site',
  url: 'http://127.0.0.1',
  baseUrl: '/',
  onBrokenLinks: 'warn',
  onBrokenAnchors: 'ignore',
  markdown: {format: 'detect', hooks: {onBrokenMarkdownLinks: 'warn'}},
  presets: [['classic', {
    docs: {path: 'docs', routeBasePath: 'docs', sidebarPath: require.resolve('./sidebars.js')},
    blog: false,
    theme: {},
  }]],
  themeConfig: {navbar: {title: 'Book'}},
};
