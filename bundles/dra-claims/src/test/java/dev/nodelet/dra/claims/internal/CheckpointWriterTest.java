package dev.nodelet.dra.claims.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import org.junit.jupiter.api.Test;

/** The batched checkpoint writes, on an executor the test runs by hand. */
class CheckpointWriterTest {

  private final Queue<Runnable> io = new ArrayDeque<>();
  private final Executor held = io::add;
  private final List<String> stored = new ArrayList<>();
  private Runnable duringStore = () -> { };
  private IOException failNext;

  private final CheckpointWriter writer = new CheckpointWriter(bytes -> {
    duringStore.run();
    if (failNext != null) {
      IOException e = failNext;
      failNext = null;
      throw e;
    }
    stored.add(new String(bytes, StandardCharsets.UTF_8));
  }, held, "test checkpoint");

  private static byte[] b(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private void runIo() {
    for (Runnable r; (r = io.poll()) != null; ) {
      r.run();
    }
  }

  @Test
  void aSubmissionCompletesOnlyOnceAWriteHoldingItReturnedFromTheStore() {
    CompletableFuture<Void> a = writer.write(b("a"));

    assertThat(a).isNotDone(); // nothing reached the disk yet
    assertThat(writer.durable()).isNotDone();
    runIo();
    assertThat(stored).containsExactly("a");
    assertThat(a).isCompleted();
    assertThat(writer.durable()).isCompleted();
  }

  @Test
  void submissionsMadeBeforeTheWriteStartsAreCoalescedIntoOneWriteOfTheNewest() {
    CompletableFuture<Void> a = writer.write(b("a"));
    CompletableFuture<Void> b = writer.write(b("b"));
    CompletableFuture<Void> c = writer.write(b("c"));

    runIo();

    assertThat(stored).containsExactly("c"); // one fsync for the three
    assertThat(List.of(a, b, c)).allMatch(CompletableFuture::isDone).noneMatch(CompletableFuture::isCompletedExceptionally);
  }

  @Test
  void whatIsSubmittedWhileAWriteRunsWaitsForTheNextWrite() {
    List<CompletableFuture<Void>> during = new ArrayList<>();
    duringStore = () -> {
      duringStore = () -> { };
      during.add(writer.write(b("second")));
      during.add(writer.write(b("third")));
      during.add(writer.durable());
    };
    CompletableFuture<Void> first = writer.write(b("first"));

    io.poll().run(); // the first write only

    assertThat(first).isCompleted();
    assertThat(during).noneMatch(CompletableFuture::isDone); // not covered by the write that was under way
    runIo();
    assertThat(stored).containsExactly("first", "third");
    assertThat(during).allMatch(f -> f.isDone() && !f.isCompletedExceptionally());
  }

  @Test
  void aFailedWriteFailsWhatItHeldAndIsReportedUntilAWriteSucceeds() {
    failNext = new IOException("disk full");
    CompletableFuture<Void> a = writer.write(b("a"));
    runIo();

    assertThat(a).isCompletedExceptionally();
    assertThat(writer.failed()).isTrue();
    assertThat(writer.durable()).isCompletedExceptionally(); // nothing pending, but the last state is not on disk

    CompletableFuture<Void> again = writer.write(b("a2"));
    runIo();
    assertThat(again).isCompleted();
    assertThat(writer.failed()).isFalse();
    assertThat(stored).containsExactly("a2");
  }
}
