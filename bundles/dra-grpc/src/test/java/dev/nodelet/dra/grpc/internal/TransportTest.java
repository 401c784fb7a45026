package dev.nodelet.dra.grpc.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TransportTest {

  @TempDir Path temp;

  @Test
  void theEventLoopIsMadeAtTheFirstDialAndEndsWithTheTransport() throws Exception {
    Transport transport = new Transport(1);
    assertThat(transport.started()).as("no driver dialled, no event loop").isFalse();

    ManagedChannel channel = transport.channel(temp.resolve("nobody.sock"));
    assertThat(transport.started()).isTrue();
    channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    transport.close();

    assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.isAlive()
        && t.getName().startsWith(Transport.THREAD_PREFIX + "-io"));
    assertThatThrownBy(() -> transport.channel(temp.resolve("late.sock")))
        .isInstanceOf(IllegalStateException.class).hasMessage("the DRA gRPC transport is closed");
  }

  @Test
  void aTransportNeverDialledClosesWithoutMakingItsEventLoop() {
    Transport transport = new Transport(1);
    transport.close();
    assertThat(transport.started()).isFalse();
  }
}
