/**
 * The environment for an npm run from a test in another directory (a scratch project, a copy of
 * the build context): without the variables `npm test` sets for this package (npm_package_*,
 * npm_lifecycle_*, npm_config_local_prefix, which would point the child's npm back at this
 * repository) nor runlog serve's settings (RUNLOG_*), which a test must not pass on.
 */
export function childNpmEnv(): NodeJS.ProcessEnv {
  const own = /^(npm_package_|npm_lifecycle_|npm_command$|npm_config_local_prefix$|INIT_CWD$|RUNLOG_)/i;
  return Object.fromEntries(Object.entries(process.env).filter(([name]) => !own.test(name)));
}
