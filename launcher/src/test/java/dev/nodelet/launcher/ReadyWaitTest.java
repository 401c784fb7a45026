package dev.nodelet.launcher;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.LongPredicate;
import org.junit.jupiter.api.Test;

/** How long the launcher waits for readiness, and what it says meanwhile, on a driven clock. */
class ReadyWaitTest {

  private static final NodeletFramework.Status READY =
      new NodeletFramework.Status(true, "", 70, List.of("KubernetesClient"));

  /** A clock that each pause moves on; the time is read as seconds since the start. */
  private static final class DrivenClock implements ReadyWait.Clock {
    long nanos;

    @Override
    public long nanoTime() {
      return nanos;
    }

    @Override
    public void sleep(long millis) {
      nanos += TimeUnit.MILLISECONDS.toNanos(millis);
    }

    long seconds() {
      return TimeUnit.NANOSECONDS.toSeconds(nanos);
    }
  }

  private final DrivenClock clock = new DrivenClock();
  private final ByteArrayOutputStream printed = new ByteArrayOutputStream();

  /** The API server away until {@code readyFrom} says otherwise (in seconds since the start). */
  private ReadyWait.Target server(boolean persistence, LongPredicate readyFrom) {
    return new ReadyWait.Target() {
      @Override
      public NodeletFramework.Status status(boolean probe) {
        return readyFrom.test(clock.seconds()) ? READY : new NodeletFramework.Status(false,
            "the API server at https://10.0.0.1:6443/ has not answered (ConnectException)", 70, List.of());
      }

      @Override
      public boolean running() {
        return true;
      }

      @Override
      public boolean persistence() {
        return persistence;
      }
    };
  }

  private NodeletFramework.Status await(int timeout, ReadyWait.Target target) throws InterruptedException {
    return new ReadyWait(timeout, clock, new PrintStream(printed, true, StandardCharsets.UTF_8)).await(target);
  }

  private List<String> lines() {
    return printed.toString(StandardCharsets.UTF_8).lines().toList();
  }

  @Test
  void withoutPersistenceTheDefaultLimitIsSixtySeconds() throws Exception {
    assertThat(await(Options.DEFAULT_READY, server(false, s -> false)).ready()).isFalse();
    assertThat(clock.seconds()).isEqualTo(ReadyWait.DEFAULT_SECONDS);
  }

  @Test
  void withPersistenceTheDefaultIsNoLimitAndTheWaitEndsWhenTheServerAnswers() throws Exception {
    // a day away
    long day = TimeUnit.DAYS.toSeconds(1);
    assertThat(await(Options.DEFAULT_READY, server(true, s -> s >= day)).ready()).isTrue();
    assertThat(clock.seconds()).isEqualTo(day);
    assertThat(lines()).filteredOn(line -> line.startsWith("Nodelet not ready after 60 s; persistence is on"))
        .hasSize(1);
    // every 10 s in the first minute, then every 5 minutes: a day costs some 300 lines, not 8640
    assertThat(lines()).filteredOn(line -> line.startsWith("Nodelet waiting: ")).hasSizeBetween(280, 300);
  }

  @Test
  void anExplicitLimitHoldsWithPersistenceAndZeroMeansNone() throws Exception {
    assertThat(await(5, server(true, s -> false)).ready()).isFalse();
    assertThat(clock.seconds()).isEqualTo(5);

    clock.nanos = 0;
    assertThat(await(0, server(false, s -> s >= 3600)).ready()).isTrue();
    assertThat(clock.seconds()).isEqualTo(3600);
  }

  @Test
  void aProgressLineComesAfterFiveSecondsAndEveryTenWhileNothingChanges() throws Exception {
    await(Options.DEFAULT_READY, server(false, s -> s >= 40));
    assertThat(lines()).containsExactly(
        "Nodelet waiting: the API server at https://10.0.0.1:6443/ has not answered (ConnectException) (5 s)",
        "Nodelet waiting: the API server at https://10.0.0.1:6443/ has not answered (ConnectException) (15 s)",
        "Nodelet waiting: the API server at https://10.0.0.1:6443/ has not answered (ConnectException) (25 s)",
        "Nodelet waiting: the API server at https://10.0.0.1:6443/ has not answered (ConnectException) (35 s)");
  }

  @Test
  void theWaitEndsWhenTheFrameworkStops() throws Exception {
    ReadyWait.Target stopped = new ReadyWait.Target() {
      @Override
      public NodeletFramework.Status status(boolean probe) {
        return new NodeletFramework.Status(false, "bundle nodelet-kube not active", 60, List.of());
      }

      @Override
      public boolean running() {
        return clock.seconds() < 2;
      }

      @Override
      public boolean persistence() {
        return true;
      }
    };
    assertThat(await(0, stopped).ready()).isFalse();
    assertThat(clock.seconds()).isEqualTo(2);
  }
}
