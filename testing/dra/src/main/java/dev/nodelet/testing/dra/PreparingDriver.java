package dev.nodelet.testing.dra;

import dev.nodelet.dra.ClaimRef;
import dev.nodelet.dra.ClaimPreparation;
import dev.nodelet.dra.PrepareResult;
import dev.nodelet.dra.PreparedDevice;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * An in-process driver that prepares each claim with the devices of its allocation, each with the CDI device ID
 * {@code k8s.<driver>/device=<device>}; it has no devices to publish and reports no health. It does no I/O, so a
 * measure of the claim manager with it is the manager's own cost; a test extends it to record or fail calls.
 */
public class PreparingDriver implements ClaimPreparation {

  private final String name;

  /** @param name the driver name, e.g. {@code gpu.example.com} */
  public PreparingDriver(String name) {
    this.name = Objects.requireNonNull(name, "name");
  }

  @Override
  public String driverName() {
    return name;
  }

  @Override
  public Map<String, PrepareResult> prepare(List<ClaimRef> claims) {
    Map<String, PrepareResult> out = new HashMap<>();
    for (ClaimRef c : claims) {
      out.put(c.uid(), PrepareResult.prepared(c.results().stream().map(r -> new PreparedDevice(
          List.of(r.getRequest()), r.getPool(), r.getDevice(), List.of("k8s." + name + "/device=" + r.getDevice()),
          null)).toList()));
    }
    return out;
  }

  @Override
  public Map<String, String> unprepare(List<ClaimRef> claims) {
    return Map.of();
  }
}
