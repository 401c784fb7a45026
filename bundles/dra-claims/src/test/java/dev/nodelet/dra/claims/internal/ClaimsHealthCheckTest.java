package dev.nodelet.dra.claims.internal;

import static org.assertj.core.api.Assertions.assertThat;

import dev.nodelet.dra.claims.ClaimInfo;
import dev.nodelet.dra.claims.ClaimStatus;
import dev.nodelet.dra.claims.ContainerDevices;
import dev.nodelet.dra.claims.DeviceHealthInfo;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.IntStream;
import java.util.stream.StreamSupport;
import org.apache.felix.hc.api.Result;
import org.junit.jupiter.api.Test;

/** The claims check warns of failing claims (naming the first few) and of a checkpoint that cannot be written. */
class ClaimsHealthCheckTest {

  /** A manager's state as the check reads it. */
  private record State(List<ClaimInfo> claims, Optional<String> checkpointProblem) implements ClaimStatus {
    @Override
    public List<ContainerDevices> containers() {
      return List.of();
    }

    @Override
    public List<DeviceHealthInfo> health() {
      return List.of();
    }
  }

  private static ClaimInfo claim(String name, String error) {
    return new ClaimInfo("ns", name, "uid-" + name, ClaimInfo.State.PREPARING, List.of("pod"), Map.of(), error,
        null);
  }

  private static List<String> messages(Result result) {
    return StreamSupport.stream(result.spliterator(), false)
        .map(entry -> entry.getStatus() + " " + entry.getMessage()).toList();
  }

  @Test
  void noFailingClaimIsOk() {
    Result result = new ClaimsHealthCheck(new State(List.of(claim("a", null), claim("b", null)), Optional.empty()))
        .execute();
    assertThat(result.isOk()).isTrue();
    assertThat(messages(result)).containsExactly("OK 2 claims, none failing");
  }

  @Test
  void failingClaimsBeyondTheFirstFewAreCountedAndTheCheckpointIsNamed() {
    List<ClaimInfo> claims = IntStream.range(0, ClaimsHealthCheck.NAMED + 2)
        .mapToObj(i -> claim("c" + i, "driver gpu: unreachable")).toList();
    Result result = new ClaimsHealthCheck(new State(claims, Optional.of("disk full"))).execute();
    assertThat(result.getStatus()).isEqualTo(Result.Status.WARN);
    assertThat(messages(result)).containsExactly("WARN the checkpoint cannot be written: disk full",
        "WARN claim ns/c0: driver gpu: unreachable", "WARN claim ns/c1: driver gpu: unreachable",
        "WARN claim ns/c2: driver gpu: unreachable", "WARN claim ns/c3: driver gpu: unreachable",
        "WARN claim ns/c4: driver gpu: unreachable", "WARN 2 more failing claims");
  }
}
