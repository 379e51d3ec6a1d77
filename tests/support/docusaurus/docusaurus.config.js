// The smallest site that renders a docs folder the way a book's site does: the classic preset (its
// theme gives Tabs, admonitions and details), docs served at the site root, nothing else.
module.exports = {
  title: 'bookrag check',
  url: 'http://127.0.0.1',
  baseUrl: '/',
  onBrokenLinks: 'ignore',
  markdown: {hooks: {onBrokenMarkdownLinks: 'ignore', onBrokenMarkdownImages: 'ignore'}},
  presets: [
    ['classic', {docs: {path: 'docs', routeBasePath: '/'}, blog: false, pages: false, theme: {}}],
  ],
};
