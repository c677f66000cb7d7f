// Former home of the product-plan choice; it lives in agent/ now.
export type { ChooseProductsOptions, ProductSource } from './agent/products.js';
export { chooseProducts, productCacheDir, productCacheFile } from './agent/products.js';
