package dev.nodelet.dra.claims.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes the checkpoint off the claim manager's thread, one write at a time, coalescing: what is submitted while a
 * write runs waits for it, and only the newest of those submissions is written next (each is the whole cache), so
 * one fsync covers every change made meanwhile. Each submission's future completes once a write that contains it
 * reached the disk, or fails with that write's error: a prepare's result is reported, and a driver called, only
 * after that.
 */
final class CheckpointWriter {

  private static final Logger LOG = LoggerFactory.getLogger(CheckpointWriter.class);

  /** Stores one whole checkpoint durably (written, forced to disk, renamed into place). */
  interface Store {
    void store(byte[] bytes) throws IOException;
  }

  private final Store store;
  private final Executor io;
  private final String what;

  // guarded by this
  private byte[] pending;
  private List<CompletableFuture<Void>> pendingFutures = new ArrayList<>();
  private List<CompletableFuture<Void>> runningFutures = new ArrayList<>();
  private boolean running;
  private boolean failed;

  CheckpointWriter(Store store, Executor io, String what) {
    this.store = store;
    this.io = io;
    this.what = what;
  }

  /** Writes these bytes (replacing a submission not yet started); completes once they, or newer ones, are on disk. */
  CompletableFuture<Void> write(byte[] bytes) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    boolean start;
    synchronized (this) {
      pending = bytes;
      pendingFutures.add(done);
      start = !running;
      running = true;
    }
    if (start) {
      startNext();
    }
    return done;
  }

  /** Completes once everything submitted so far is on disk (at once when nothing is pending). */
  synchronized CompletableFuture<Void> durable() {
    if (pending != null) {
      CompletableFuture<Void> done = new CompletableFuture<>();
      pendingFutures.add(done);
      return done;
    }
    if (running) {
      CompletableFuture<Void> done = new CompletableFuture<>();
      runningFutures.add(done);
      return done;
    }
    return failed ? CompletableFuture.failedFuture(new IOException("the last write of " + what + " failed"))
        : CompletableFuture.completedFuture(null);
  }

  /** The last write failed: what it held is not on disk until the next write succeeds. */
  synchronized boolean failed() {
    return failed;
  }

  private void startNext() {
    try {
      io.execute(this::writeOne);
    } catch (RejectedExecutionException e) {
      List<CompletableFuture<Void>> dropped;
      synchronized (this) {
        dropped = pendingFutures;
        pendingFutures = new ArrayList<>();
        pending = null;
        running = false;
      }
      dropped.forEach(f -> f.completeExceptionally(new IOException("the claim manager is closed")));
    }
  }

  private void writeOne() {
    byte[] bytes;
    List<CompletableFuture<Void>> covered;
    synchronized (this) {
      bytes = pending;
      pending = null;
      runningFutures = pendingFutures;
      pendingFutures = new ArrayList<>();
    }
    IOException error = null;
    try {
      store.store(bytes);
    } catch (IOException e) {
      error = e;
    } catch (RuntimeException e) {
      error = new IOException(e);
    }
    boolean next;
    synchronized (this) {
      covered = runningFutures;
      runningFutures = new ArrayList<>();
      failed = error != null;
      next = pending != null;
      running = next;
    }
    if (error == null) {
      covered.forEach(f -> f.complete(null));
    } else {
      LOG.error("Writing {} failed; claims are not prepared until it can be written", what, error);
      IOException cause = error;
      covered.forEach(f -> f.completeExceptionally(cause));
    }
    if (next) {
      startNext();
    }
  }
}
