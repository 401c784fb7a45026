package dev.nodelet.objectcache.testing;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * What a test made and closes at its end, the last made first ({@code @AutoClose} on a field): every one is
 * closed even if an earlier one fails to close.
 */
public final class Resources implements AutoCloseable {

  private final Deque<AutoCloseable> resources = new ArrayDeque<>();

  /** Closes {@code resource} with the others, before whatever was registered earlier; returns it. */
  public <T extends AutoCloseable> T closeLater(T resource) {
    resources.push(resource);
    return resource;
  }

  @Override
  public void close() throws Exception {
    Exception failure = null;
    while (!resources.isEmpty()) {
      try {
        resources.pop().close();
      } catch (Exception e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
