/**
 * User agents whose opens and clicks are machine (decisions.md "Engagement analytics"): link scanners
 * and checkers, link previews of chat and social apps (a tracked link pasted somewhere), image and
 * prefetch proxies, HTTP libraries and headless browsers.
 *
 * Source: monperrus/crawler-user-agents, `crawler-user-agents.json` (MIT licence), at commit
 * 7c7f9f254f16fcbc7d0fcb60d0a188897c00b050 (2026-07-02): the entries below are its patterns of agents
 * that follow links or load images of messages, written as plain text. To update: take the patterns
 * of the newer file for such agents, drop regex escapes (`\/` is `/`, `\.` is `.`), and add them here;
 * a pattern that needs more than plain text and a leading `^` does not fit and is left out.
 *
 * Each entry is matched case-insensitively against the request's User-Agent: anywhere in it, or only
 * at its start when written with a leading `^`. Plain substring tests, no regular expressions: a
 * crafted user agent costs a bounded, linear amount (machine-detection.ts).
 *
 * Left out on purpose: `GoogleImageProxy`. Gmail's proxy loads a message's images when its reader
 * opens it, so its fetch is that person's open; a prefetch right after delivery is caught by the
 * seconds-after-delivery rule instead.
 */
export const MACHINE_USER_AGENTS: readonly string[] = [
  // Link scanners and checkers
  'Google-Safety',
  'virustotal',
  'BingPreview/',
  'MicrosoftPreview/',
  'TwinWaveScanner',
  'CloudflareRadarURLScanner',
  'Cloudflare-Radar-Scanner',
  'LinkCheckerBot',
  'W3C-checklink',
  'deadlinkchecker',
  'Dead Link Checker',
  'brokenlinkcheck.com',
  'MB-LinkChecker',
  'SwifteqLinkChecker',
  'UASlinkChecker/',
  'SENTINEL-LinkCheck',
  'LinkTiger',
  'Xenu Link Sleuth',
  'LinkWalker/',
  'OutsellURLValidator',
  // Link previews (a tracked link shared in a chat or a post)
  'Slackbot',
  'Slack-ImgProxy',
  'SkypeUriPreview',
  'WhatsApp',
  'TelegramBot',
  'Discordbot',
  'LinkedInBot',
  'facebookexternalhit',
  'meta-externalfetcher/',
  'Twitterbot',
  'Yahoo Link Preview',
  'Google Web Preview',
  'Snap URL Preview Service',
  'SnapURLPreview/',
  'BufferLinkPreviewBot',
  'ClickUpLinkUnfurler',
  'BlueskyPreviewBot',
  'Chatwork LinkPreview',
  'DingTalkBot-LinkService',
  'Orlo-LinkPreview/',
  'EvernoteRichLinkBot',
  'page-preview-tool',
  'redditbot',
  'vkShare',
  'Iframely',
  'Embedly',
  // Image and prefetch proxies
  'YahooMailProxy',
  'Chrome Privacy Preserving Prefetch Proxy',
  'CloudFlare-Prefetch',
  'FlipboardProxy',
  'StartpagePrivateImageProxy/',
  'Shortwave Image Fetcher',
  'imgproxy/',
  'ImageFetcher/',
  'FastmailUA',
  // HTTP libraries and headless browsers
  '^curl',
  'python-requests',
  'Python-urllib',
  'aiohttp',
  'httpx',
  'Go-http-client',
  'okhttp',
  'axios',
  'node-fetch',
  'libwww-perl',
  '^Apache-HttpClient',
  'Scrapy',
  'HeadlessChrome',
  'PhantomJS',
];
