// A Docusaurus client module: adds the bookrag widget once, in the browser only.
// docusaurus.config.js: clientModules: [require.resolve('./src/bookrag.js')]
import ExecutionEnvironment from '@docusaurus/ExecutionEnvironment';

const API_URL = 'https://API_URL'; // the SAM stack's ApiUrl
const KEY = 'brk_pub_...'; // a publishable key (bookrag mint-key --publishable --origin https://your.site)

if (ExecutionEnvironment.canUseDOM && !document.getElementById('bookrag-script')) {
  const script = document.createElement('script');
  script.id = 'bookrag-script';
  script.src = `${API_URL}/widget/v1/bookrag.js`;
  script.defer = true;
  script.dataset.book = 'Physical AI & Humanoid Robotics';
  script.dataset.key = KEY;
  document.body.appendChild(script);
}
