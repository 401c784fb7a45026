package dev.nodelet.karaf.shell;

import dev.nodelet.dra.DraStatus;
import org.apache.karaf.shell.api.action.Action;
import org.apache.karaf.shell.api.action.lifecycle.Reference;

/** A command that prints a view of the DRA node controller's status; Karaf injects the fields of superclasses too. */
abstract class DraStatusCommand implements Action {

  /** Optional, so that the object cache commands of this bundle register without the DRA controller. */
  @Reference(optional = true)
  DraStatus status;

  @Override
  public Object execute() {
    if (status == null) {
      throw new IllegalStateException("the DRA node controller (feature nodelet-dra) is not running");
    }
    System.out.print(view(status));
    return null;
  }

  /** @return the text to print */
  abstract String view(DraStatus status);
}
