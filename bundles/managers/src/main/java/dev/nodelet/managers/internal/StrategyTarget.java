package dev.nodelet.managers.internal;

import java.util.Optional;
import org.osgi.framework.FrameworkUtil;
import org.osgi.framework.InvalidSyntaxException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Says what is wrong with a {@code strategy.target}. SCR itself applies the value: a filter it cannot parse matches
 * no service, so the manager answers with its built-in {@code get} (keeping every registration) until the value is
 * corrected. There is no "last good" strategy to keep: the strategy service bound before may be gone by then.
 */
final class StrategyTarget {

  static final String KEY = "strategy.target";

  private static final Logger LOG = LoggerFactory.getLogger(StrategyTarget.class);

  private StrategyTarget() {
  }

  /** Logs an error naming the key if {@code target} is not an LDAP filter. */
  static void check(String pid, String target) {
    problem(target).ifPresent(problem -> LOG.error("Configuration {}: {}", pid, problem));
  }

  /** @return what is wrong with the value, naming the key, or empty if SCR can use it */
  static Optional<String> problem(String target) {
    if (target == null || target.isBlank()) {
      return Optional.of(KEY + " is empty; it must be an LDAP filter such as (nodelet.strategy=watch). Until it is "
          + "corrected no strategy service matches and the manager answers with its built-in get, keeping every "
          + "registration");
    }
    try {
      FrameworkUtil.createFilter(target);
      return Optional.empty();
    } catch (InvalidSyntaxException e) {
      return Optional.of(KEY + " \"" + target + "\" is not an LDAP filter (" + e.getMessage() + "); write e.g. "
          + "(nodelet.strategy=watch) or use nodelet:strategy. Until it is corrected no strategy service matches "
          + "and the manager answers with its built-in get, keeping every registration");
    }
  }
}
