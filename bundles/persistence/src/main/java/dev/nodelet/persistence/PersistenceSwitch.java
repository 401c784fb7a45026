package dev.nodelet.persistence;

import java.util.Objects;
import java.util.Optional;

/**
 * The persistence directory of a strategy service whose configuration can change: the open directory is kept while
 * the {@code persistence.*} keys stay the same, so that the stores before and after a change share it, and closed
 * before another one opens when they change, since a store file is open in one place at a time.
 *
 * @since 1.1
 */
public final class PersistenceSwitch implements AutoCloseable {

  private final String nodeName;
  // guarded by this
  private Optional<PersistenceConfig> config = Optional.empty();
  private Persistence open;

  /** @param nodeName the node the files belong to */
  public PersistenceSwitch(String nodeName) {
    this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
  }

  /**
   * The directory to use for these keys. If they changed, the directory open before is closed first (stores still
   * using it then fail their writes with a warning, until their owner has moved to new stores).
   *
   * @param next the keys now; empty for no persistence
   * @return the open directory; empty for no persistence
   * @throws IllegalArgumentException if the key file cannot be used (see {@link Persistence#open})
   * @throws java.io.UncheckedIOException if the directory cannot be created
   */
  public synchronized Optional<Persistence> use(Optional<PersistenceConfig> next) {
    Objects.requireNonNull(next, "next");
    if (open != null && next.equals(config)) {
      return Optional.of(open);
    }
    close();
    open = next.map(c -> Persistence.open(c.options(nodeName))).orElse(null);
    config = next;
    return Optional.ofNullable(open);
  }

  /** Closes the open directory, if any. Idempotent. */
  @Override
  public synchronized void close() {
    if (open != null) {
      open.close();
      open = null;
    }
    config = Optional.empty();
  }
}
