package dev.nodelet.dra;

import java.util.List;
import java.util.Objects;

/**
 * The outcome of preparing one claim: the prepared devices, or why it failed.
 *
 * @param devices the prepared devices; empty when the claim failed or needs no devices on this node
 * @param error why preparing failed, or {@code null} on success
 * @since 1.2
 */
public record PrepareResult(List<PreparedDevice> devices, String error) {

  /** Copies the list. */
  public PrepareResult {
    devices = List.copyOf(devices);
  }

  /** @return a success with these devices */
  public static PrepareResult prepared(List<PreparedDevice> devices) {
    return new PrepareResult(devices, null);
  }

  /** @return a failure with this reason */
  public static PrepareResult failed(String error) {
    return new PrepareResult(List.of(), Objects.requireNonNull(error, "error"));
  }

  /** @return whether the claim was prepared */
  public boolean ok() {
    return error == null;
  }
}
