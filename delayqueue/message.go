package delayqueue

import "time"

// A Message is one delivery of a message, as Poll returns it. Ack, Nack
// and Extend act on that delivery only, named by its Token: once its
// lease lapses, or it is acked or given back, they return ErrNotHeld for
// it, even when the message is delivered again with the same Attempt
// (after Requeue). A Message not made by Poll (a zero Message, a dead
// letter) names no delivery: they return ErrInvalidConfig for it.
type Message struct {
	// ID names the message for as long as it is queued: the one its
	// pusher gave (WithID, Job.ID), or 26 random letters and digits,
	// minted by Push before it sends the message.
	ID string

	// Token names this delivery: minted by Poll before it sends its
	// call, it is never used for another, so Ack, Nack and Extend of a
	// delivery that has ended cannot act on a later one. Empty for a dead
	// letter.
	Token string

	// Payload is the payload pushed, byte for byte.
	Payload []byte

	// Attempt is the number of this delivery: 1 on the first. A lapsed
	// lease or a Nack makes the next delivery Attempt+1.
	Attempt int

	// DueAt is when the message became due, on the server's clock: its
	// push's time plus its delay, or, delivered again, when its lease
	// lapsed or the time a Nack gave. For a dead letter, when it was
	// dead-lettered.
	DueAt time.Time

	// Deadline is when this delivery's lease lapses, on the server's
	// clock, unless Extend renews it: the delivery's time plus
	// Config.Visibility. Zero for a dead letter. Ack and Nack read it to
	// answer a call sent again (see Ack).
	Deadline time.Time
}
